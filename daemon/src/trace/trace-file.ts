import fs from "node:fs";
import path from "node:path";
import { statePath } from "../config/state-dir.js";
import { toolResultMessage } from "../context/messages.js";
import type { ToolResult } from "../contracts/tool-call.js";
import { type TraceFileContent, TraceFileLine } from "../contracts/trace-file.js";
import { redactDeep, redactText } from "../redact/index.js";
import type { Ledger } from "../store/ledger.js";
import { MiniAgentError } from "../errors.js";
import { canonicalEvent, type PathPlaceholders } from "./export.js";

/** Every trace-file figure in one place. */
export const TRACE_FILE_DEFAULTS = {
  /** a model text or an observation longer than this (UTF-8 bytes) is cut, `truncated: true` */
  contentCapBytes: 64 * 1024,
  /** GET /v1/runs/:id/trace-file refuses a file larger than this (use `trace RUN --jsonl`, which pages nothing but has no content) */
  maxServeBytes: 64 * 1024 * 1024,
} as const;

/**
 * What a step hands the trace beside its event: the model's text, or the tool
 * result the model is shown. It goes to the trace file only; the ledger's
 * event row never holds it (the ledger has the message itself).
 */
export type TraceContentInput = { kind: "model_text"; text: string } | { kind: "observation"; tool: string; result: ToolResult };

export interface TraceFileLog {
  warn(obj: Record<string, unknown>, msg: string): void;
}

const RUN_ID = /^run_[A-Za-z0-9_-]{1,64}$/;

/** `<state-dir>/traces/<run_id>.jsonl`; null for a run id that is not one of ours (it never becomes a path). */
export function traceFilePath(stateDir: string, runId: string): string | null {
  return RUN_ID.test(runId) ? path.join(statePath(stateDir, "traces"), `${runId}.jsonl`) : null;
}

/**
 * Writes each committed event of a run as one line of its trace file, with
 * one synchronous write (no buffer in this process: a SIGKILL loses at most
 * the line being written). The line is built from the committed ledger row
 * through the export's own canonical form, so it is exactly what
 * `trace RUN --jsonl` prints, plus `at` and `content`.
 *
 * Must not throw: a failed write (disk full, folder removed, a symlink planted
 * at the file's name) is logged once per run and that run's file is given up
 * in this process; the run goes on, the ledger stays the source of truth.
 */
export class TraceFileWriter {
  private readonly open = new Map<string, OpenTraceFile>();
  private readonly failed = new Set<string>();

  constructor(
    private readonly opts: {
      stateDir: string;
      ledger: Ledger;
      log: TraceFileLog;
      contentCapBytes?: number;
    },
  ) {}

  /** Called after the event's commit (Ledger.afterCommit). */
  write(runId: string, seq: number, content?: TraceContentInput): void {
    if (this.failed.has(runId)) return;
    try {
      const file = this.fileOf(runId);
      // events committed but never written (a crash between the commit and the write, or a run
      // from before trace files) are written first, without content: the file stays in seq order
      const from = file.lastSeq !== null && file.lastSeq < seq ? file.lastSeq : seq - 1;
      const rows = this.opts.ledger.listEvents(runId, from).filter((r) => r.seq <= seq);
      const canonical = canonicalEvent(file.paths);
      for (const row of rows) {
        const e = canonical(row);
        const line = TraceFileLine.parse({
          seq: e.seq,
          at: row.at,
          type: e.type,
          call_id: e.call_id,
          action_id: e.action_id,
          payload: e.payload,
          ...(content && row.seq === seq && { content: this.contentOf(content) }),
        });
        writeAll(file.fd, Buffer.from(`${JSON.stringify(line)}\n`));
        file.lastSeq = row.seq;
      }
      // a stopped run writes nothing until it is resumed: its descriptor is not kept
      if (rows.some((r) => r.type === "run_stopped")) this.close(runId);
    } catch (err) {
      this.failed.add(runId);
      this.close(runId);
      this.opts.log.warn({ runId, err }, "trace file write failed; the run goes on, the ledger keeps every event");
    }
  }

  close(runId: string): void {
    const file = this.open.get(runId);
    this.open.delete(runId);
    if (file) {
      try {
        fs.closeSync(file.fd);
      } catch {
        // already gone: nothing to release
      }
    }
  }

  closeAll(): void {
    for (const runId of [...this.open.keys()]) this.close(runId);
  }

  private fileOf(runId: string): OpenTraceFile {
    const known = this.open.get(runId);
    if (known) return known;
    const file = traceFilePath(this.opts.stateDir, runId);
    if (!file) throw new Error(`not a run id: ${runId}`);
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    // O_NOFOLLOW: a symlink planted at the name is refused (ELOOP), never written through
    const fd = fs.openSync(file, fs.constants.O_RDWR | fs.constants.O_APPEND | fs.constants.O_CREAT | fs.constants.O_NOFOLLOW, 0o600);
    try {
      terminateTornLine(fd);
      const record = this.opts.ledger.getRun(runId).record;
      const paths = { workspace: record.workspace, controlDir: record.control_dir, stateDir: this.opts.stateDir };
      const entry: OpenTraceFile = { fd, paths, lastSeq: lastSeqIn(fd) };
      this.open.set(runId, entry);
      return entry;
    } catch (err) {
      fs.closeSync(fd);
      throw err;
    }
  }

  private contentOf(c: TraceContentInput): TraceFileContent {
    const known = this.opts.ledger.knownSecrets();
    // redacted exactly as the ledger stores the message the model is then shown (redactDeep over the result)
    const text = c.kind === "model_text" ? redactText(c.text, known) : observationText(redactDeep(c.result, known) as ToolResult, c.tool);
    return { kind: c.kind, ...capUtf8(text, this.opts.contentCapBytes ?? TRACE_FILE_DEFAULTS.contentCapBytes) };
  }
}

interface OpenTraceFile {
  fd: number;
  paths: PathPlaceholders;
  /** the seq of the file's last complete event line; null when it cannot be found (then nothing is back-filled) */
  lastSeq: number | null;
}

/** How far back from the end a reopened file is searched for its last event (a line holds at most one capped content). */
const TAIL_BYTES = 1024 * 1024;

/** The seq of the last complete, valid line, read from the file's tail; 0 for an empty file. */
function lastSeqIn(fd: number): number | null {
  const size = fs.fstatSync(fd).size;
  if (size === 0) return 0;
  const len = Math.min(size, TAIL_BYTES);
  const buf = Buffer.alloc(len);
  fs.readSync(fd, buf, 0, len, size - len);
  const lines = buf.toString("utf8").split("\n");
  lines.pop(); // after the last "\n": nothing (terminateTornLine ran first)
  // the first piece is cut unless the tail is the whole file
  const whole = len === size;
  for (let i = lines.length - 1; i >= (whole ? 0 : 1); i--) {
    try {
      const parsed = TraceFileLine.safeParse(JSON.parse(lines[i] as string));
      if (parsed.success) return parsed.data.seq;
    } catch {
      // a torn fragment: look further back
    }
  }
  return null;
}

/** The tool message's content exactly as the model view serialises it (context/messages.ts). */
function observationText(result: ToolResult, tool: string): string {
  const m = toolResultMessage(result, tool);
  return m.role === "tool" ? m.content : "";
}

/** Cut at `cap` UTF-8 bytes, backing off to a character boundary; `bytes` is the size before the cut. */
export function capUtf8(text: string, cap: number): { text: string; bytes: number; truncated: boolean } {
  const buf = Buffer.from(text, "utf8");
  if (buf.length <= cap) return { text, bytes: buf.length, truncated: false };
  let end = cap;
  // a continuation byte (10xxxxxx) is never where a character starts
  while (end > 0 && ((buf[end] as number) & 0xc0) === 0x80) end--;
  return { text: buf.subarray(0, end).toString("utf8"), bytes: buf.length, truncated: true };
}

/**
 * A file reopened after a crash may end in a fragment of the line being
 * written then; a "\n" first keeps the next event on a line of its own (the
 * parser reports the fragment as a torn line, never as an event).
 */
function terminateTornLine(fd: number): void {
  const size = fs.fstatSync(fd).size;
  if (size === 0) return;
  const last = Buffer.alloc(1);
  // read-write only for this: O_APPEND moves every write to the end, a positional read is unaffected
  fs.readSync(fd, last, 0, 1, size - 1);
  if (last[0] !== 0x0a) writeAll(fd, Buffer.from("\n"));
}

function writeAll(fd: number, buf: Buffer): void {
  let off = 0;
  while (off < buf.length) off += fs.writeSync(fd, buf, off, buf.length - off);
}

/**
 * The run's trace file as it is on disk, for GET /v1/runs/:id/trace-file.
 * Bounded: a file over `maxBytes` is refused (its path is named, so it can be
 * read on the daemon's host). Never follows a symlink.
 */
export async function readTraceFile(stateDir: string, runId: string, maxBytes: number = TRACE_FILE_DEFAULTS.maxServeBytes): Promise<string> {
  const file = traceFilePath(stateDir, runId);
  if (!file) throw new MiniAgentError("invalid_request", `not a run id: ${runId}`);
  let handle: fs.promises.FileHandle;
  try {
    handle = await fs.promises.open(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  } catch (err) {
    throw new MiniAgentError(
      "not_found",
      `run ${runId} has no trace file (its file could not be written, see the daemon log); \`trace ${runId} --jsonl\` exports its events from the ledger`,
      {
        cause: err,
        details: { run_id: runId },
      },
    );
  }
  try {
    const size = (await handle.stat()).size;
    if (size > maxBytes) {
      throw new MiniAgentError(
        "payload_too_large",
        `the trace file of ${runId} is ${size} bytes, over the ${maxBytes} this endpoint serves; read ${file} on the daemon's host`,
        {
          details: { run_id: runId, bytes: size, max_bytes: maxBytes, path: file },
        },
      );
    }
    const buf = Buffer.alloc(size);
    const { bytesRead } = await handle.read(buf, 0, size, 0);
    return buf.subarray(0, bytesRead).toString("utf8");
  } finally {
    await handle.close();
  }
}
