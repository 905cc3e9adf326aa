import { Duplex, PassThrough, Readable } from "node:stream";
import type Docker from "dockerode";
import { describe, expect, it } from "vitest";
import { parseEndTail } from "./attach-channel.js";
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
function fakeDocker(attach: ReturnType<typeof engineStream>, opts: { killDelayMs?: number; execStream?: PassThrough; stopped?: Promise<unknown> } = {}) {
  const container = {
    id: "fake-container",
    start: async () => undefined,
    attach: async () => attach.stream,
    exec: async () => ({ start: async () => opts.execStream, inspect: async () => ({ Running: false, ExitCode: 0 }) }),
    wait: () => opts.stopped ?? new Promise(() => undefined),
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
const spec = (box: SandboxContainer, timeoutMs: number, signal?: AbortSignal) => ({
  argv: ["x"],
  env: [],
  timeoutMs,
  capBytes: 1024,
  signal,
  onStop: () => box.kill(),
});

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

  it("regression (issue 10 item 9): a container that stops while its attach stream stays open ends the command as lost, not at the deadline", async () => {
    const attach = engineStream();
    let stop!: (v: unknown) => void;
    const stopped = new Promise((r) => (stop = r));
    const box = await SandboxContainer.start(fakeDocker(attach, { stopped }), config, "sha256:x", "r", "session", false);
    const p = box.run(spec(box, 30_000));
    // the engine says the container stopped; the stream (as under gVisor) never ends by itself
    setTimeout(() => stop({ StatusCode: 137 }), 20);
    const o = await p;
    expect(o).toMatchObject({ exitCode: null, spawnerLost: true, timedOut: false, cancelled: false });
    // and the next command on that channel does not wait at all
    await expect(box.run(spec(box, 30_000))).resolves.toMatchObject({ spawnerLost: true, timedOut: false });
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

/** The engine's multiplexed attach stream, reduced to what the channel reads: a tag byte for stdout (1) or stderr (2). */
function taggedDocker(answer: (nonce: string) => Array<[1 | 2, string]>) {
  const stream = new Duplex({
    read() {},
    write(chunk: Buffer, _enc, done) {
      // spawn-proto.h: a 12-byte header, then the 32-hex-digit nonce
      const nonce = chunk.subarray(12, 44).toString("latin1");
      setImmediate(() => {
        for (const [tag, text] of answer(nonce)) stream.push(Buffer.concat([Buffer.from([tag]), Buffer.from(text, "latin1")]));
      });
      done();
    },
  });
  const container = {
    id: "fake-container",
    start: async () => undefined,
    attach: async () => stream,
    wait: () => new Promise(() => undefined),
    inspect: async () => ({ State: { Running: true, OOMKilled: false } }),
    kill: async () => undefined,
    remove: async () => undefined,
  };
  return {
    createContainer: async () => container,
    listVolumes: async () => ({ Volumes: [] }),
    // the engine's event log has moved on: it reports no oom for this container
    getEvents: async () => Readable.from([]),
    modem: {
      demuxStream: (s: NodeJS.ReadableStream, out: NodeJS.WritableStream, err: NodeJS.WritableStream) =>
        s.on("data", (c: Buffer) => (c[0] === 2 ? err : out).write(c.subarray(1))),
    },
  } as unknown as Docker;
}

describe("the spawner's end marker", () => {
  it("regression (exit 137, no summary, no OOM recorded): the kernel's OOM count from the spawner decides, even when the engine reports no oom", async () => {
    const docker = taggedDocker((nonce) => [
      [1, "TAP version 13\n"],
      [1, `\0mini-agent-end:${nonce}:137:9:0:2\0`],
      [2, `\0mini-agent-end:${nonce}\0`],
    ]);
    const box = await SandboxContainer.start(docker, config, "sha256:x", "r", "session", false);
    const o = await box.run(spec(box, 30_000));
    expect(o).toMatchObject({ exitCode: 137, signal: 9, pidsLimitHits: 0, oomKills: 2, oomKilled: true, spawnerLost: false, stdout: "TAP version 13\n" });
  });

  it("carries the pids limit's refusals, and unknown counts (gVisor: no cgroupfs inside) as null", () => {
    expect(parseEndTail("0:0:17:0")).toEqual({ status: 0, facts: { signal: null, pidsLimitHits: 17, oomKills: 0 } });
    expect(parseEndTail("134:6:-1:-1")).toEqual({ status: 134, facts: { signal: 6, pidsLimitHits: null, oomKills: null } });
  });

  it("anything else in the marker is no status at all", () => {
    for (const tail of ["0", "0:0:1", "x:0:0:0", "0:0:0:0:0", "-1:0:0:0", "0:0:0:1e3"]) expect(parseEndTail(tail)).toBeNull();
  });
});
