import { z } from "zod";
import { Sha256Hex } from "./common.js";
import { ExpectRule } from "./eval-case.js";
import { RunStatus } from "./run.js";
import { SweBenchStatus } from "./run-view.js";

/**
 * `eval-report.json`: what `mini-agent-client eval run` writes and what the
 * release gate (`mini-agent-client gate`) and the HTML page read. Strict: the
 * gate refuses a report it does not fully understand.
 */

/** One rule of expect.json, judged: `expected` and `observed` are the rule's values as JSON. */
export const RuleResult = z.strictObject({
  rule: ExpectRule,
  expected: z.unknown(),
  observed: z.unknown(),
  passed: z.boolean(),
});
export type RuleResult = z.infer<typeof RuleResult>;

/**
 * passed: every rule passed. failed: a rule failed. needs_human: the run stopped
 * for a person's answer that the eval profile could not give (the run was
 * cancelled, never left waiting). error: the case could not be run (bad case,
 * daemon refused it, daemon unreachable); `error` says why.
 */
export const CaseVerdict = z.enum(["passed", "failed", "needs_human", "error"]);
export type CaseVerdict = z.infer<typeof CaseVerdict>;

const Count = z.int().min(0);

/** Who ran a case of an eval fleet, with what (contracts/fleet.ts): one per attempt that reached a worker. */
export const WorkerIdentity = z.strictObject({
  hostname: z.string().max(255),
  worker_id: z.string().max(128),
  engine_version: z.string().nullable(),
  runtime: z.string(),
  image_digest: z.string().nullable(),
  /** sha256 of the worker's latest isolation report as its daemon serves it; null: none */
  isolation_report_sha256: Sha256Hex.nullable(),
});
export type WorkerIdentity = z.infer<typeof WorkerIdentity>;

export const CaseResult = z.strictObject({
  /** the case folder's name */
  id: z.string().min(1).max(128),
  /** version of repo/, task.json, control/ and expect.json (contracts/eval-case.ts) */
  hash: Sha256Hex,
  verdict: CaseVerdict,
  expected_status: RunStatus,
  /** null when the case never got a run (verdict error) */
  status: z.nullable(RunStatus),
  reason: z.string().nullable(),
  rules: z.array(RuleResult),
  run_id: z.string().nullable(),
  /** the OCI runtime the case's sandboxes ran under (absent when it never got a run, and in reports made before per-run runtimes) */
  runtime: z.optional(z.enum(["runc", "runsc"])),
  tool_calls: Count,
  turns: Count,
  tokens: z.strictObject({ prompt: Count, completion: Count }),
  wall_ms: Count,
  /** approvals the eval profile gave (approval_recorded by=policy:...) */
  prompts_by_policy: Count,
  /** uncertain writes met by recovery */
  uncertain: Count,
  /** verification_failed events */
  verifier_rejections: Count,
  /** model protocol errors: observations with invalid_fields / unknown_tool, model_error turns */
  protocol_errors: Count,
  /** how many of them the case's expect.json expects (`require.protocol_errors`; absent in older reports: 0) */
  expected_protocol_errors: Count.optional(),
  /** how many times the case was started (a daemon crash re-runs it from a fresh workspace) */
  attempts: z.int().min(1),
  /** relative to the report: the run's trace file copy and its final diff */
  trace_file: z.string().nullable(),
  diff_file: z.string().nullable(),
  error: z.string().max(4096).nullable(),
  /**
   * The Verifier's verdict in a person's words, as `status` prints it: why it failed
   * first, then the tests against the baseline and the runner's own first lines
   * (absent when the case never got a verdict, and in older reports)
   */
  why: z.array(z.string().max(1024)).max(48).optional(),
  /**
   * An eval fleet's run (`eval run --queue`): every worker that started the
   * case, in order (a worker that died mid-case is listed before the one that
   * finished it). Absent on a local run.
   */
  workers: z.array(WorkerIdentity).optional(),
  /** the case's result as SWE-bench's harness reports an instance (RunView.swebench); absent when the case never got a run to its end */
  swebench: z.optional(SweBenchStatus),
});
export type CaseResult = z.infer<typeof CaseResult>;

const Spread = z.strictObject({ p50: z.number().min(0), p95: z.number().min(0), mean: z.number().min(0) });

export const EvalAggregates = z.strictObject({
  cases: Count,
  passed: Count,
  failed: Count,
  needs_human: Count,
  errors: Count,
  /** passed / cases, 0 when there are none */
  pass_rate: z.number().min(0).max(1),
  /** per rule: how many cases failed it */
  rule_failures: z.partialRecord(ExpectRule, Count),
  wall_ms: Spread,
  tool_calls: Spread,
  tokens: z.strictObject({ prompt: Count, completion: Count, mean_per_case: z.number().min(0) }),
  /** protocol errors per tool call over the suite */
  protocol_error_rate: z.number().min(0),
  /**
   * protocol errors that no case expected (each case's errors beyond its
   * `require.protocol_errors`), in all and per tool call: what the gate judges.
   * Absent in reports made before it: the gate then judges every error.
   */
  unexpected_protocol_errors: Count.optional(),
  unexpected_protocol_error_rate: z.number().min(0).optional(),
});
export type EvalAggregates = z.infer<typeof EvalAggregates>;

export const EvalReport = z.strictObject({
  schema_version: z.literal(1),
  kind: z.literal("eval_report"),
  /** the cases by id and version, sorted by id; `hash` is SHA-256 of the sorted `id:hash` lines */
  suite: z.strictObject({ cases: z.array(z.strictObject({ id: z.string(), hash: Sha256Hex })), hash: Sha256Hex }),
  settings: z.strictObject({
    model: z.enum(["replay", "live"]),
    /** `--runtime`, else the daemon's: every case ran under it (each case names its own too) */
    runtime: z.enum(["runc", "runsc"]),
    policy_profile: z.string(),
    concurrency: z.int().min(1),
  }),
  started_at: z.string(),
  finished_at: z.string(),
  cases: z.array(CaseResult),
  aggregates: EvalAggregates,
});
export type EvalReport = z.infer<typeof EvalReport>;
