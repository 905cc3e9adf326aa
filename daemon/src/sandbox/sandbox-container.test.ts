import { Duplex, PassThrough, Readable } from "node:stream";
import type Docker from "dockerode";
import { describe, expect, it } from "vitest";
import { resolveSandboxConfig } from "./config.js";
import { SandboxContainer } from "./sandbox-container.js";

/** The engine's side of a hijacked stream: what the host writes is swallowed; `output` is what the engine sends. */
function engineStream(): { stream: Duplex; output: PassThrough } {
  const output = new PassThrough();
  const stream = new Duplex({
    read() {},
    write(_chunk, _enc, done) {
      done();
    },
  });
  output.on("data", (c: Buffer) => stream.push(c));
  output.on("end", () => stream.push(null));
  output.on("error", (e) => stream.emit("error", e));
  return { stream, output };
}

/**
 * Fakes only for faults the real engine cannot be made to produce on demand:
 * a connection that breaks mid-stream, and a kill that takes a while.
 */
function fakeDocker(attach: ReturnType<typeof engineStream>, opts: { killDelayMs?: number; execStream?: PassThrough } = {}) {
  const container = {
    id: "fake-container",
    start: async () => undefined,
    attach: async () => attach.stream,
    exec: async () => ({ start: async () => opts.execStream, inspect: async () => ({ Running: false, ExitCode: 0 }) }),
    wait: () => new Promise(() => undefined),
    inspect: async () => ({ State: { OOMKilled: false } }),
    kill: async () => {
      await new Promise((r) => setTimeout(r, opts.killDelayMs ?? 0));
      attach.output.end();
      opts.execStream?.end();
    },
    remove: async () => undefined,
  };
  return {
    createContainer: async () => container,
    listVolumes: async () => ({ Volumes: [] }),
    getVolume: () => ({ remove: async () => undefined }),
    getEvents: async () => Readable.from([]),
    modem: {
      // raw frames are not needed here: the fake stream carries plain stdout bytes
      demuxStream: (s: NodeJS.ReadableStream, out: NodeJS.WritableStream) => s.on("data", (c: Buffer) => out.write(c)),
    },
  } as unknown as Docker;
}

const config = resolveSandboxConfig({});
const spec = (box: SandboxContainer, timeoutMs: number, signal?: AbortSignal) => ({ argv: ["x"], env: [], timeoutMs, capBytes: 1024, signal, onStop: () => box.kill() });

describe("SandboxContainer.run with engine faults", () => {
  it("an attach stream that breaks mid-command is a lost spawner (no status), with what was kept", async () => {
    const attach = engineStream();
    const box = await SandboxContainer.start(fakeDocker(attach), config, "sha256:x", "r", "candidate", false);
    const p = box.run(spec(box, 60_000));
    setImmediate(() => {
      attach.output.write("partial output");
      attach.output.emit("error", Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }));
    });
    const o = await p;
    expect(o.stdout).toBe("partial output");
    expect(o).toMatchObject({ exitCode: null, spawnerLost: true, timedOut: false, cancelled: false });
  });

  it("timeout then cancel before the kill completes keeps both flags", async () => {
    const attach = engineStream();
    const box = await SandboxContainer.start(fakeDocker(attach, { killDelayMs: 200 }), config, "sha256:x", "r", "candidate", false);
    const ctl = new AbortController();
    const p = box.run(spec(box, 20, ctl.signal));
    setTimeout(() => ctl.abort(), 60);
    const o = await p;
    expect(o).toMatchObject({ timedOut: true, cancelled: true, exitCode: null, spawnerLost: false });
  });

  it("an already aborted signal runs nothing and reports cancelled", async () => {
    const attach = engineStream();
    const box = await SandboxContainer.start(fakeDocker(attach), config, "sha256:x", "r", "candidate", false);
    const ctl = new AbortController();
    ctl.abort();
    const o = await box.run(spec(box, 1000, ctl.signal));
    expect(o).toMatchObject({ cancelled: true, timedOut: false, exitCode: null });
  });

  it("refuses a second command while one runs on the channel", async () => {
    const attach = engineStream();
    const box = await SandboxContainer.start(fakeDocker(attach), config, "sha256:x", "r", "candidate", false);
    const first = box.run(spec(box, 60_000));
    await expect(box.run(spec(box, 60_000))).rejects.toMatchObject({ code: "sandbox_error" });
    await box.kill();
    await first;
  });
});

describe("SandboxContainer.control with engine faults", () => {
  it("an engine error mid-stream ends the exec with what was kept, flagged truncated (regression: hang on a broken attach)", async () => {
    const execStream = new PassThrough();
    const box = await SandboxContainer.start(fakeDocker(engineStream(), { execStream }), config, "sha256:x", "r", "session", false);
    const p = box.control(spec(box, 60_000));
    setImmediate(() => {
      execStream.write("partial output");
      execStream.emit("error", Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }));
    });
    const o = await p;
    expect(o.stdout).toBe("partial output");
    expect(o.truncated).toBe(true);
    expect(o.timedOut).toBe(false);
  });
});
