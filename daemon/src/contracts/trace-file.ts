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

/** A last line without its newline, or one that is not a valid event: reported, never parsed as valid. */
export interface TornLine {
  /** 1-based line number */
  line: number;
  bytes: number;
  why: "no_newline" | "invalid";
}

export interface ParsedTraceFile {
  events: TraceFileLine[];
  /** set when the file ends in a line a crash cut short; every line before it is valid */
  torn: TornLine | null;
}

/**
 * Reads a trace file's text. Every complete line must be a valid event; the
 * last line may be torn by a crash (no newline, or not valid JSON/event): it is
 * reported in `torn` and left out, never returned as an event. An invalid line
 * that is NOT the last one means the file was damaged, not torn: that is an
 * error (thrown as a plain Error naming the line), because the lines after it
 * cannot be trusted to be in order.
 */
export function parseTraceFile(text: string): ParsedTraceFile {
  const events: TraceFileLine[] = [];
  if (text === "") return { events, torn: null };
  const lines = text.split("\n");
  const endsClean = lines[lines.length - 1] === "";
  if (endsClean) lines.pop();
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i] as string;
    const last = i === lines.length - 1;
    if (last && !endsClean) return { events, torn: { line: i + 1, bytes: Buffer.byteLength(raw), why: "no_newline" } };
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      json = undefined;
    }
    const parsed = TraceFileLine.safeParse(json);
    if (!parsed.success) {
      if (last) return { events, torn: { line: i + 1, bytes: Buffer.byteLength(raw), why: "invalid" } };
      throw new Error(`trace file line ${i + 1} is not a valid event (and is not the last line)`);
    }
    events.push(parsed.data);
  }
  return { events, torn: null };
}
