import { PassThrough, Readable } from "node:stream";
import type Docker from "dockerode";
import { describe, expect, it } from "vitest";
import { resolveSandboxConfig } from "./config.js";
import { SandboxContainer } from "./sandbox-container.js";

/**
 * Fakes only for faults the real engine cannot be made to produce on demand:
 * a connection that breaks mid-stream, and a kill that takes a while.
 */
function fakeDocker(stream: PassThrough, opts: { killDelayMs?: number } = {}) {
  const container = {
    id: "fake-container",
    start: async () => undefined,
    exec: async () => ({ start: async () => stream, inspect: async () => ({ Running: false, ExitCode: 0 }) }),
    wait: () => new Promise(() => undefined),
    inspect: async () => ({ State: { OOMKilled: false } }),
    kill: async () => {
      await new Promise((r) => setTimeout(r, opts.killDelayMs ?? 0));
      stream.end();
    },
    remove: async () => undefined,
  };
  return {
    createVolume: async () => ({}),
    getVolume: () => ({ remove: async () => undefined }),
    createContainer: async () => container,
    getEvents: async () => Readable.from([]),
    modem: {
      // raw frames are not needed here: the fake stream carries plain stdout bytes
      demuxStream: (s: NodeJS.ReadableStream, out: NodeJS.WritableStream) => s.on("data", (c: Buffer) => out.write(c)),
    },
  } as unknown as Docker;
}

const config = resolveSandboxConfig({});

describe("SandboxContainer.exec with engine faults", () => {
  it("an engine error mid-stream ends the exec with what was kept, flagged truncated (regression: hang on a broken attach)", async () => {
    const stream = new PassThrough();
    const box = await SandboxContainer.start(fakeDocker(stream), config, "sha256:x", "r", "candidate", false);
    const p = box.exec({ argv: ["x"], env: [], timeoutMs: 60_000, capBytes: 1024, onStop: () => box.kill() });
    setImmediate(() => {
      stream.write("partial output");
      stream.emit("error", Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }));
    });
    const o = await p;
    expect(o.stdout).toBe("partial output");
    expect(o.truncated).toBe(true);
    expect(o.timedOut).toBe(false);
  });

  it("timeout then cancel before the kill completes keeps both flags", async () => {
    const stream = new PassThrough();
    const box = await SandboxContainer.start(fakeDocker(stream, { killDelayMs: 200 }), config, "sha256:x", "r", "candidate", false);
    const ctl = new AbortController();
    const p = box.exec({ argv: ["x"], env: [], timeoutMs: 20, capBytes: 1024, signal: ctl.signal, onStop: () => box.kill() });
    setTimeout(() => ctl.abort(), 60);
    const o = await p;
    expect(o).toMatchObject({ timedOut: true, cancelled: true, exitCode: null });
  });

  it("an already aborted signal runs nothing and reports cancelled", async () => {
    const stream = new PassThrough();
    const box = await SandboxContainer.start(fakeDocker(stream), config, "sha256:x", "r", "candidate", false);
    const ctl = new AbortController();
    ctl.abort();
    const o = await box.exec({ argv: ["x"], env: [], timeoutMs: 1000, capBytes: 1024, signal: ctl.signal, onStop: () => box.kill() });
    expect(o).toMatchObject({ cancelled: true, timedOut: false, exitCode: null });
  });
});
