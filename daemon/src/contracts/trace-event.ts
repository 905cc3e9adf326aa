import * as z from "zod/mini";
import { EventType, RunStatus } from "./run.js";
import { TestCounts } from "./run-view.js";
import { VerifierReason } from "./verifier-reason.js";

/**
 * One schema per trace event type: what its payload holds. The daemon checks a
 * payload against its type's schema before the event is stored (trace/trace.ts:
 * a payload that does not fit is an internal error and nothing is written),
 * and every reader (eval's judge, live records, the client's trace lines)
 * parses an event with readTraceEvent instead of reading keys off a record.
 *
 * Payloads are loose objects: a field this version does not name is kept, not
 * refused, so a trace written by a newer daemon (one more field) still reads,
 * and the fields named here are checked on both sides.
 */
const Str = z.string();
const NullableStr = z.nullable(z.string());
const Bool = z.boolean();
const Num = z.number();

/**
 * What a verdict event names of its tests against the baseline: the ids that changed between the
 * baseline's two runs (`unstable`) are read from here by id, never guessed from `disappeared`.
 * Loose and optional: a verdict written before two baseline runs (or with no comparison) still reads.
 */
const VerdictTests = z.looseObject({
  compare: z.optional(z.looseObject({ unstable: z.optional(z.array(Str)), disappeared: z.optional(z.array(Str)), counts: z.optional(z.record(Str, Num)) })),
});

export const TRACE_PAYLOADS = {
  run_created: z.looseObject({
    task: Str,
    model: Str,
    backend: Str,
    runtime: z.optional(Str),
    replay_trusted: z.optional(Bool),
  }),
  project_context: z.looseObject({ untrusted: z.optional(Bool) }),
  model_requested: z.looseObject({ model: Str, attempt: Num }),
  model_retry: z.looseObject({ attempt: Num, code: Str }),
  plan_recorded: z.looseObject({ text: Str }),
  tool_proposed: z.looseObject({ name: Str, arguments: z.record(z.string(), z.unknown()) }),
  tool_observed: z.looseObject({
    tool: Str,
    ok: Bool,
    error: NullableStr,
    truncated: Bool,
    // run_tests only: the figures and the daemon's own verdict (`green`, tools/test-verdict.ts): a reader never recounts it
    ...TestCounts.def.shape,
    discovered: z.optional(Num),
    passed: z.optional(Num),
    failed: z.optional(Num),
  }),
  approval_requested: z.looseObject({
    tool: Str,
    workspace_digest: Str,
    rule: z.optional(z.nullable(Str)),
    path: z.optional(Str),
    argv: z.optional(z.array(Str)),
  }),
  approval_recorded: z.looseObject({
    decision: z.enum(["approved", "rejected", "stale", "denied"]),
    reason: z.optional(Str),
    by: z.optional(Str),
  }),
  action_intent: z.looseObject({ path: Str }),
  action_written: z.looseObject({ path: Str, source: z.optional(Str) }),
  action_receipt: z.looseObject({ path: Str, source: z.optional(Str) }),
  verification_started: z.looseObject({}),
  verification_passed: z.looseObject({ reason: z.nullable(VerifierReason), tests: z.optional(VerdictTests) }),
  verification_failed: z.looseObject({ reason: z.nullable(VerifierReason), tests: z.optional(VerdictTests) }),
  history_compaction: z.looseObject({}),
  sandbox_include: z.looseObject({ globs: z.array(Str), paths: z.array(Str) }),
  run_resumed: z.looseObject({ from: RunStatus }),
  run_stopped: z.looseObject({ status: RunStatus, reason: z.optional(Str) }),
} satisfies Record<EventType, z.ZodMiniType>;

export type TracePayload<T extends EventType> = z.infer<(typeof TRACE_PAYLOADS)[T]>;

/** An event as a reader sees it once parsed: its type decides its payload's shape. */
export type TypedTraceEvent = {
  [T in EventType]: { seq: number; type: T; call_id: string | null; action_id: string | null; payload: TracePayload<T> };
}[EventType];

/** What a writer hands the trace: the type picks the payload's shape at compile time, and append checks it again. */
export type TraceEventInput = {
  [T in EventType]: { type: T; call_id?: string | null; action_id?: string | null; payload: TracePayload<T> };
}[EventType];

/** The payload checked against its type's schema; a zod error (path and message) when it does not fit. */
export function checkTracePayload(type: EventType, payload: unknown): { ok: true } | { ok: false; error: string } {
  const r = TRACE_PAYLOADS[type].safeParse(payload);
  return r.success ? { ok: true } : { ok: false, error: z.prettifyError(r.error) };
}

/**
 * An event read back (from the API, a trace file, the ledger), typed by its
 * payload's schema. A type this version does not know (a newer daemon's) or a
 * payload that does not fit its type (a trace written before a field was
 * named) comes back as null: readers skip it, so an old reader counts what it
 * knows and never guesses at the rest.
 */
export function readTraceEvent(e: { seq: number; type: string; call_id: string | null; action_id: string | null; payload: unknown }): TypedTraceEvent | null {
  const type = EventType.safeParse(e.type);
  if (!type.success) return null;
  const payload = TRACE_PAYLOADS[type.data].safeParse(e.payload);
  if (!payload.success) return null;
  return { seq: e.seq, type: type.data, call_id: e.call_id, action_id: e.action_id, payload: payload.data } as TypedTraceEvent;
}
