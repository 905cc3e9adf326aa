import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Duplex, Readable } from "node:stream";
import type Docker from "dockerode";
import { afterAll, describe, expect, it } from "vitest";
import { isMiniAgentError } from "../errors.js";
import { DockerExecutor } from "./docker-executor.js";
import { PROTOCOL_LABEL, SANDBOX_PROTOCOL } from "./labels.js";

const DIGEST = "sha256:" + "a".repeat(64);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mini-agent-dexec-"));
const lockPath = path.join(dir, "lock.json");
fs.writeFileSync(lockPath, JSON.stringify({ schema_version: 1, images: { node: { tag: "t", digest: DIGEST, built_at: "x" } } }));
const ws = path.join(dir, "ws");
fs.mkdirSync(ws);
fs.writeFileSync(path.join(ws, "a.txt"), "A");
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/**
 * Fakes for what a real engine cannot be made to do on demand: the command
 * channel ending with no status while the container is (or is not) still running.
 */
function fakeDocker(stillRunning: boolean): Docker {
  const attach = new Duplex({
    read() {},
    write(c: Buffer, _e, done) {
      const type = c.length >= 12 && c.readUInt32LE(0) === 0x6d615370 ? c.readUInt32LE(4) : null;
      if (type === 5) {
        // the workspace (SPAWN_PUT) goes in: both end markers with status 0, on stdout (1) and stderr (2)
        const nonce = c.subarray(12, 44).toString("latin1");
        attach.push(Buffer.concat([Buffer.from([1]), Buffer.from(`\0mini-agent-end:${nonce}:0:0:-1:-1\0`, "latin1")]));
        attach.push(Buffer.concat([Buffer.from([2]), Buffer.from(`\0mini-agent-end:${nonce}\0`, "latin1")]));
      }
      // the command's request arrives; the channel then ends without a status
      if (type === 1) setImmediate(() => attach.push(null));
      done();
    },
  });
  const container = {
    id: "fake",
    start: async () => undefined,
    attach: async () => attach,
    inspect: async () => ({ State: { Running: stillRunning, OOMKilled: false } }),
    // the engine's wait for "not-running" returns once the container stopped
    wait: () => (stillRunning ? new Promise(() => undefined) : new Promise((r) => setTimeout(() => r({ StatusCode: 137 }), 20))),
    kill: async () => undefined,
    remove: async () => undefined,
  };
  return {
    getImage: () => ({ inspect: async () => ({ Id: DIGEST, Config: { Labels: { [PROTOCOL_LABEL]: SANDBOX_PROTOCOL } } }) }),
    createContainer: async () => container,
    listVolumes: async () => ({ Volumes: [] }),
    getEvents: async () => Readable.from([]),
    // each pushed chunk is one frame: its first byte says the stream (1 stdout, 2 stderr)
    modem: {
      demuxStream: (s: Readable, out: NodeJS.WritableStream, err: NodeJS.WritableStream) =>
        s.on("data", (c: Buffer) => (c[0] === 2 ? err : out).write(c.subarray(1))),
    },
  } as unknown as Docker;
}

const req = { runId: "r", purpose: "verifier" as const, argv: ["node", "-e", "0"], workspaceDir: ws, timeoutMs: 10_000 };

describe("DockerExecutor.run when no status comes back", () => {
  it("is a sandbox failure while the sandbox still runs (the channel broke), never a result", async () => {
    const err = await new DockerExecutor({ lockPath, docker: fakeDocker(true) }).run(req).catch((e) => e);
    expect(isMiniAgentError(err, "sandbox_error")).toBe(true);
    expect(err.message).toMatch(/command channel was lost/);
  });

  it("is the command's result (killed, no exit code) when the whole sandbox died under it", async () => {
    const res = await new DockerExecutor({ lockPath, docker: fakeDocker(false) }).run(req);
    expect(res).toMatchObject({ exit_code: null, timed_out: false, cancelled: false, oom_killed: false, sandbox_lost: true, limits: [], image_digest: DIGEST });
  });
});

describe("install under runsc", () => {
  // Regression: under gVisor the install sandbox cannot reach the egress proxy's socket (its probes show no
  // socket and every proxy connection reset), so `env build` ran the install and failed it with network errors.
  it("is refused before anything is made, naming runc", async () => {
    const asked: string[] = [];
    const docker = new Proxy({} as Docker, {
      get: (_t, name) => {
        asked.push(String(name));
        return () => Promise.reject(new Error("no engine call expected"));
      },
    });
    const { DependencyLayers } = await import("./dependency-layer.js");
    const ex = new DockerExecutor({
      lockPath,
      docker,
      config: { runtime: "runsc" },
      layers: new DependencyLayers({ docker, dir: path.join(dir, "layers"), instance: null }),
      installTools: { npmRoot: dir, shell: "/bin/sh" },
    });
    const err = await ex
      .install({
        workspace: ws,
        spec: { forbidden: [], include: [] },
        command: "npm ci",
        allow: [],
        tool: { kind: "npm", registry: "http://127.0.0.1:9/" },
        timeoutMs: 1000,
      })
      .catch((e: unknown) => e);
    expect(isMiniAgentError(err, "invalid_request")).toBe(true);
    expect((err as Error).message).toMatch(/runc/);
    expect(asked).toEqual([]);
    expect(fs.existsSync(path.join(dir, "layers"))).toBe(false);
  });
});
