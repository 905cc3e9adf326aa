import { z } from "zod";
import { EventType } from "./run.js";

/**
 * `<state-dir>/traces/<run_id>.jsonl`: one line per event, written as the run
 * goes (mode 0600). A line is the event as `trace RUN --jsonl` prints it, plus
 * `at` (epoch ms) and, for a model turn or a tool observation, `content`: the
 * model's text or the observation's content, redacted by the daemon's one rule
 * set and cut at a per-event byte cap (`truncated`).
 */
export const TraceFileContent = z.strictObject({
  kind: z.enum(["model_text", "observation"]),
  text: z.string(),
  /** the content's size in UTF-8 bytes before the cap */
  bytes: z.int().min(0),
  truncated: z.boolean(),
});
export type TraceFileContent = z.infer<typeof TraceFileContent>;

export const TraceFileLine = z.strictObject({
  seq: z.int().min(1),
  at: z.int().min(0),
  type: EventType,
  call_id: z.string().nullable(),
  action_id: z.string().nullable(),
  payload: z.record(z.string(), z.unknown()),
  content: TraceFileContent.optional(),
});
export type TraceFileLine = z.infer<typeof TraceFileLine>;

/**
 * A line that is not a valid event: the last line without its newline (a crash
 * cut it short), or a complete line that does not parse. The daemon terminates
 * a torn fragment with "\n" when it reopens the file after a restart, so new
 * events are never glued onto it: such a fragment then sits mid-file. Either
 * way it is reported here and never returned as an event.
 */
export interface TornLine {
  /** 1-based line number */
  line: number;
  bytes: number;
  why: "no_newline" | "invalid";
}

export interface ParsedTraceFile {
  /** every valid line, in file order (each carries its seq) */
  events: TraceFileLine[];
  /** every line that is not a valid event, in file order; empty for a clean file */
  torn: TornLine[];
}

/** Reads a trace file's text; never throws. */
export function parseTraceFile(text: string): ParsedTraceFile {
  const events: TraceFileLine[] = [];
  const torn: TornLine[] = [];
  if (text === "") return { events, torn };
  const lines = text.split("\n");
  const endsClean = lines[lines.length - 1] === "";
  if (endsClean) lines.pop();
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i] as string;
    if (i === lines.length - 1 && !endsClean) {
      torn.push({ line: i + 1, bytes: Buffer.byteLength(raw), why: "no_newline" });
      break;
    }
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      json = undefined;
    }
    const parsed = TraceFileLine.safeParse(json);
    if (parsed.success) events.push(parsed.data);
    else torn.push({ line: i + 1, bytes: Buffer.byteLength(raw), why: "invalid" });
  }
  return { events, torn };
}
