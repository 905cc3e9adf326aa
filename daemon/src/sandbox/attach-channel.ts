import crypto from "node:crypto";
import { once } from "node:events";
import { Writable } from "node:stream";
import type Docker from "dockerode";
import { MiniAgentError } from "../errors.js";
import { engineError } from "./image-pin.js";
import { CappedOutput } from "./output.js";
import { NO_FACTS, type CommandFacts, type CommandOutcome, type ExecSpec } from "./exec-outcome.js";

/** spawn-proto.h */
const SPAWN_MAGIC = 0x6d615370;
const SPAWN_RUN = 1;
const SPAWN_PUT = 5;
const END = "mini-agent-end:";
/** after a kill, how long the attach stream may take to end before it is cut. */
const STOP_GRACE_MS = 5_000;
/** after the engine says the container stopped, how long the marker or the stream's end may still take. */
const STOPPED_GRACE_MS = 1_000;

/**
 * Scans one output stream for the end marker the spawner writes after the
 * command (NUL + "mini-agent-end:" + nonce + tail + NUL). Everything before it
 * goes to the command's capped output; a few bytes that could start the
 * marker are held back until the next chunk decides.
 */
class MarkerScanner {
  private held = Buffer.alloc(0);
  done = false;
  tail = "";
  constructor(
    private readonly marker: Buffer,
    private readonly sink: (b: Buffer) => void,
  ) {}

  push(chunk: Buffer): void {
    if (this.done) return;
    const buf = this.held.length ? Buffer.concat([this.held, chunk]) : chunk;
    const at = buf.indexOf(this.marker);
    if (at >= 0) {
      const end = buf.indexOf(0, at + this.marker.length);
      if (end < 0) {
        if (at > 0) this.sink(buf.subarray(0, at));
        this.held = Buffer.from(buf.subarray(at));
        return;
      }
      if (at > 0) this.sink(buf.subarray(0, at));
      this.tail = buf.subarray(at + this.marker.length, end).toString("latin1");
      this.done = true;
      this.held = Buffer.alloc(0);
      return;
    }
    const keep = Math.min(buf.length, this.marker.length - 1);
    if (buf.length > keep) this.sink(buf.subarray(0, buf.length - keep));
    this.held = Buffer.from(buf.subarray(buf.length - keep));
  }

  /** the stream ended without a marker: what was held back is output too */
  flush(): void {
    if (!this.done && this.held.length) this.sink(this.held);
    this.held = Buffer.alloc(0);
  }
}

interface Current {
  out: Writable;
  err: Writable;
  ended: () => void;
}

/** `<status>:<signal>:<pids>:<oom>` after the nonce on stdout (spawn-proto.h); null when it is anything else. */
export function parseEndTail(tail: string): { status: number; facts: CommandFacts } | null {
  const m = /^(\d{1,3}):(\d{1,3}):(-1|\d{1,18}):(-1|\d{1,18})$/.exec(tail);
  if (!m) return null;
  const count = (v: string) => (v === "-1" ? null : Number(v));
  const signal = Number(m[2]);
  return { status: Number(m[1]) & 0xff, facts: { signal: signal === 0 ? null : signal, pidsLimitHits: count(m[3]!), oomKills: count(m[4]!) } };
}

/**
 * A sandbox's command channel: one attach to the spawner's stdin, stdout
 * and stderr for the container's life. A command is a request on stdin; its
 * output comes back on the attach stream, ended by a marker that carries a
 * fresh nonce the command never sees. Saves the `docker exec` per command
 * (measured ~28 ms of ~38 ms overhead with runc), in a warm sandbox and in a
 * fresh one alike. One command at a time: a second concurrent `run` is refused.
 */
export class AttachChannel {
  private current: Current | null = null;
  private closed = false;
  /** the engine said the container is no longer running */
  private stopped = false;
  private readonly watch = new AbortController();

  private constructor(private readonly stream: NodeJS.ReadWriteStream) {}

  static async open(docker: Docker, container: Docker.Container): Promise<AttachChannel> {
    let stream: NodeJS.ReadWriteStream;
    try {
      stream = (await container.attach({ stream: true, stdin: true, stdout: true, stderr: true, hijack: true } as never)) as unknown as NodeJS.ReadWriteStream;
    } catch (err) {
      throw engineError(err);
    }
    const ch = new AttachChannel(stream);
    const route = (which: "out" | "err") =>
      new Writable({
        write: (chunk: Buffer, _enc, done) => {
          // output outside a command (none is expected) is dropped
          ch.current?.[which].write(chunk);
          done();
        },
      });
    docker.modem.demuxStream(stream, route("out"), route("err"));
    const end = () => {
      ch.closed = true;
      ch.current?.ended();
    };
    stream.on("end", end);
    stream.on("close", end);
    stream.on("error", end);
    ch.watchStop(container);
    return ch;
  }

  /**
   * The attach stream ends when the container stops, but nothing guarantees it
   * (issue 10 item 9 saw a killed spawner under gVisor noticed only at the
   * deadline). The engine's own wait says it independently: once the container
   * is no longer running, a command still waiting gets a short grace for its
   * marker and then ends as lost.
   */
  private watchStop(container: Docker.Container): void {
    const waited = container.wait({ condition: "not-running", abortSignal: this.watch.signal } as never) as unknown as Promise<unknown>;
    void Promise.resolve(waited).then(
      () => {
        if (this.watch.signal.aborted) return;
        this.stopped = true;
        const cur = this.current;
        if (cur) setTimeout(() => this.current === cur && cur.ended(), STOPPED_GRACE_MS).unref();
      },
      () => undefined,
    );
  }

  destroy(): void {
    this.closed = true;
    this.watch.abort();
    (this.stream as unknown as { destroy(): void }).destroy();
  }

  /** Runs one command; `spec.onStop` must kill the container (the stream then ends). */
  run(spec: ExecSpec & { cwd: string }): Promise<CommandOutcome> {
    return this.exchange(spec, (nonce) => void this.stream.write(request(nonce, spec.argv, spec.cwd, spec.env)));
  }

  /**
   * Sends a tar stream for the spawner to extract into /workspace (SPAWN_PUT):
   * its status is 0 when all of it went in; the refusal's reason is on stderr.
   * A tar stream that fails on the host (a file changed while it was packed)
   * stops the exchange like a deadline does, and `put` rejects with its error.
   */
  async put(tar: NodeJS.ReadableStream, spec: Omit<ExecSpec, "argv" | "env">): Promise<CommandOutcome> {
    let packError: unknown = null;
    let done = false;
    const ac = new AbortController();
    const onAbort = () => ac.abort();
    spec.signal?.addEventListener("abort", onAbort, { once: true });
    // copied chunk by chunk, never piped: the channel stays open after the archive (the command
    // comes next on the same stdin), and tar-stream's pipe would end it
    const pump = async () => {
      for await (const chunk of tar as AsyncIterable<Buffer>) {
        if (done || this.closed) return;
        if (!this.stream.write(chunk)) await Promise.race([once(this.stream as never, "drain"), once(this.stream as never, "close")]);
      }
    };
    try {
      const outcome = await this.exchange({ ...spec, argv: [], env: [], signal: ac.signal }, (nonce) => {
        const header = Buffer.alloc(12);
        header.writeUInt32LE(SPAWN_MAGIC, 0);
        header.writeUInt32LE(SPAWN_PUT, 4);
        header.writeUInt32LE(32, 8);
        this.stream.write(Buffer.concat([header, Buffer.from(nonce, "latin1")]));
        pump().catch((err: unknown) => {
          packError ??= err;
          ac.abort();
        });
      });
      if (packError) throw packError;
      return outcome;
    } finally {
      done = true;
      spec.signal?.removeEventListener("abort", onAbort);
    }
  }

  private async exchange(spec: ExecSpec, send: (nonce: string) => void): Promise<CommandOutcome> {
    if (spec.signal?.aborted) {
      return { exitCode: null, timedOut: false, cancelled: true, truncated: false, stdout: "", stderr: "", spawnerLost: false, ...NO_FACTS };
    }
    if (this.current) throw new MiniAgentError("sandbox_error", "the sandbox's command channel is busy with another command");
    const nonce = crypto.randomBytes(16).toString("hex");
    const out = new CappedOutput(spec.capBytes);
    const so = new MarkerScanner(Buffer.from(`\0${END}${nonce}:`, "latin1"), (b) => out.push("stdout", b));
    const se = new MarkerScanner(Buffer.from(`\0${END}${nonce}`, "latin1"), (b) => out.push("stderr", b));
    let timedOut = false;
    let cancelled = false;
    let streamEnded = false;
    let stopping: Promise<void> | null = null;
    const stop = (why: "timeout" | "cancel") => {
      if (why === "timeout") timedOut = true;
      else cancelled = true;
      stopping ??= spec.onStop(why).catch(() => undefined);
      // once stopped, the stream must end soon; if something still holds it open, stop waiting
      void stopping.then(() => setTimeout(() => this.destroy(), STOP_GRACE_MS).unref());
    };
    const onAbort = () => stop("cancel");
    const timer = setTimeout(() => stop("timeout"), spec.timeoutMs);
    spec.signal?.addEventListener("abort", onAbort, { once: true });
    try {
      await new Promise<void>((resolve) => {
        const check = () => {
          if (so.done && se.done) resolve();
        };
        this.current = {
          out: new Writable({ write: (c: Buffer, _e, d) => (so.push(c), check(), d()) }),
          err: new Writable({ write: (c: Buffer, _e, d) => (se.push(c), check(), d()) }),
          ended: () => {
            streamEnded = true;
            so.flush();
            se.flush();
            resolve();
          },
        };
        if (this.closed || this.stopped) return this.current.ended();
        send(nonce);
      });
    } finally {
      this.current = null;
      clearTimeout(timer);
      spec.signal?.removeEventListener("abort", onAbort);
    }
    if (stopping) await stopping;
    const end = so.done && se.done && !timedOut && !cancelled ? parseEndTail(so.tail) : null;
    const exitCode = end?.status ?? null;
    // no marker and no deadline or cancel: the spawner (or the whole container) is gone; callers rule out OOM first
    const spawnerLost = !timedOut && !cancelled && (streamEnded || exitCode === null);
    const facts = end?.facts ?? NO_FACTS;
    return { exitCode, timedOut, cancelled, truncated: out.truncated, stdout: out.text("stdout"), stderr: out.text("stderr"), spawnerLost, ...facts };
  }
}

/** spawn-proto.h framing; the payload starts with the nonce (attached requests only). */
function request(nonce: string, argv: string[], cwd: string, env: string[]): Buffer {
  const strings = [cwd, ...argv, ...env].map((s) => Buffer.concat([Buffer.from(s, "utf8"), Buffer.from([0])]));
  const counts = Buffer.alloc(8);
  counts.writeUInt32LE(argv.length, 0);
  counts.writeUInt32LE(env.length, 4);
  const payload = Buffer.concat([Buffer.from(nonce, "latin1"), counts, ...strings]);
  const header = Buffer.alloc(12);
  header.writeUInt32LE(SPAWN_MAGIC, 0);
  header.writeUInt32LE(SPAWN_RUN, 4);
  header.writeUInt32LE(payload.length, 8);
  return Buffer.concat([header, payload]);
}
