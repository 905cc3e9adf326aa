import { z } from "zod";
import { Id, Sha256Hex } from "./common.js";
import { CaseResult, WorkerIdentity } from "./eval-report.js";
import { ImageFamily } from "./test-report.js";

/**
 * Eval fleets (issue 15): what travels through the job queue between
 * `mini-agent-client eval run --queue` and `mini-agent-worker`. Both sides
 * parse with these; nothing else crosses Redis. No field can hold a model
 * credential: the case is a tar of the case folder, the result is the
 * judged CaseResult plus the worker's public facts.
 */

/** A job's payload. `suite_run` names the eval run (its output folder) so a cancel reaches only its own jobs. */
export const FleetJob = z.strictObject({
  schema_version: z.literal(1),
  suite_run: z.string().regex(/^[0-9a-f]{16,64}$/),
  /**
   * a case folder's name, and the worker makes folders of it: the run ids' strict pattern, minus the
   * names that are not a folder of their own (a forged `../`×12 + path once unpacked a case at an absolute path)
   */
  case_id: Id.refine((s) => s !== "." && s !== "..", "a case id is a folder name: not . or .."),
  /** the case's version (case-hash.ts): the worker checks the unpacked case is this one */
  case_hash: Sha256Hex,
  family: ImageFamily,
  model: z.enum(["replay", "live"]),
  profile: z.enum(["interactive", "ci", "eval"]),
  /** the case folder as a deterministic tar, base64 (eval/src/fleet/case-payload.ts) */
  tar_base64: z.string(),
  tar_sha256: Sha256Hex,
});
export type FleetJob = z.infer<typeof FleetJob>;

/** The caps on what a result carries back through Redis. */
export const FLEET_RESULT_LIMITS = { traceBytes: 1024 * 1024, diffBytes: 256 * 1024 } as const;

/** A job's return value. `trace`/`diff` are cut at the limits (`*_truncated` says so). */
export const FleetResult = z.strictObject({
  schema_version: z.literal(1),
  result: CaseResult,
  worker: WorkerIdentity,
  trace: z.string().max(FLEET_RESULT_LIMITS.traceBytes),
  trace_truncated: z.boolean(),
  diff: z.string().max(FLEET_RESULT_LIMITS.diffBytes),
  diff_truncated: z.boolean(),
});
export type FleetResult = z.infer<typeof FleetResult>;

export { WorkerIdentity };

/** What a worker records on a job when it starts an attempt (a job log line), so the report names every worker that ran it. */
export const AttemptLog = z.strictObject({ kind: z.literal("attempt_started"), attempt: z.int().min(1), worker: WorkerIdentity });
export type AttemptLog = z.infer<typeof AttemptLog>;
