import { z } from "zod";
import { FileVersion, Id, SCHEMA_VERSION, describeZodError } from "../contracts/common.js";
import { Decision } from "../contracts/decision.js";
import { EffectivePolicy } from "../contracts/policy.js";
import { OrchestratorName, RunStatus } from "../contracts/run.js";
import { BudgetName, VerificationEvidence } from "../contracts/run-view.js";
import { Backend, DependencyLayerRef, Runtime, SandboxInclude } from "../contracts/sandbox.js";
import { Budgets, TaskSpec } from "../contracts/task-spec.js";
import { ToolResult } from "../contracts/tool-call.js";
import { MiniAgentError } from "../errors.js";

/**
 * Every JSON column of the ledger is one of these records. They are validated
 * when read back; a record with another schema_version is refused
 * (`schema_version_unsupported`), never reinterpreted.
 */
const V = z.literal(SCHEMA_VERSION);

/** What a run was created with: fixed for the life of the run, except budgets (resume may raise them). */
export const RunRecord = z.strictObject({
  schema_version: V,
  task: TaskSpec,
  workspace: z.string(),
  control_dir: z.string(),
  fixture_dir: z.string().nullable(),
  model: z.enum(["replay", "live"]),
  backend: Backend,
  /** `--runtime`: the OCI runtime of the run's sandboxes (absent: the daemon's configured one, as for runs made before it) */
  runtime: z.optional(Runtime),
  replay_path: z.string().nullable(),
  replay_trusted: z.boolean(),
  budgets: Budgets,
  /** `--sandbox-include`: forbidden paths the run's sandboxes may still see (absent: none) */
  sandbox_include: z.optional(SandboxInclude),
  /** the dependency folders that enter its sandboxes as read-only layers (absent: none; runs made before layers) */
  dependency_layers: z.optional(z.array(DependencyLayerRef)),
  /** an ad-hoc run (`--goal`): the daemon drafted `task` from the folder (absent: a fixture or a given task spec) */
  adhoc: z.optional(z.strictObject({ test_source: z.string(), dirty_files: z.array(z.string()) })),
  /** the policy resolved at creation (daemon file + profile + workspace tightening); absent in runs made before policies: the built-in `interactive` */
  policy: z.optional(EffectivePolicy),
  /** `--orchestrator`: who takes the turns (absent in runs made before orchestrators: manual) */
  orchestrator: z.optional(OrchestratorName),
});
export type RunRecord = z.infer<typeof RunRecord>;

export const Counters = z.strictObject({
  model_turns: z.int().min(0),
  tool_calls: z.int().min(0),
  writes: z.int().min(0),
  elapsed_ms: z.number().min(0),
  prompt_tokens: z.int().min(0),
  completion_tokens: z.int().min(0),
});
export type Counters = z.infer<typeof Counters>;

export const StopFacts = z.strictObject({
  cancelled: z.boolean(),
  timed_out: z.boolean(),
  /** which budget ran out, when one did */
  exhausted: z.nullable(BudgetName),
});
export type StopFacts = z.infer<typeof StopFacts>;

/** What changes as the run moves. */
export const RunState = z.strictObject({
  schema_version: V,
  counters: Counters,
  stop: StopFacts,
  /** status before an interruption, so resume knows whether to re-enter the Verifier or the model */
  interrupted_from: z.nullable(RunStatus),
  pending_action_id: Id.nullable(),
  last_tool: z.string().nullable(),
  last_plan: z.string().nullable(),
  /** the last run_tests; an exit-code-only preset has no count (0s), only `green` (contracts/run-view.ts TestCounts) */
  tests: z
    .strictObject({
      discovered: z.number(),
      passed: z.number(),
      failed: z.number(),
      exit_code_only: z.boolean().optional(),
      green: z.boolean().optional(),
      load_errors: z.number().optional(),
    })
    .nullable(),
  /** stored with the run view's own schema, so no field is lost on the way (details once was) */
  verification: z.nullable(VerificationEvidence),
});
export type RunState = z.infer<typeof RunState>;

export const BindingRecord = z.strictObject({
  schema_version: V,
  run_id: Id,
  binding_id: z.string().min(16),
  workspace: z.string(),
  control_dir: z.string(),
  state_dir: z.string(),
  /** the workspace root's identity: a workspace moved away and replaced by another dir is noticed */
  workspace_dev: z.number(),
  workspace_ino: z.number(),
});
export type BindingRecord = z.infer<typeof BindingRecord>;

export const MessageRecord = z.discriminatedUnion("role", [
  z.strictObject({ schema_version: V, role: z.literal("assistant"), decision: Decision }),
  z.strictObject({ schema_version: V, role: z.literal("tool"), result: ToolResult }),
]);
export type MessageRecord = z.infer<typeof MessageRecord>;

export const ActionStatus = z.enum(["pending", "approved", "rejected", "stale", "intent", "written", "receipted", "uncertain"]);
export type ActionStatus = z.infer<typeof ActionStatus>;

/** A prepared write, persisted BEFORE the approval prompt is shown. */
export const ActionRecord = z.strictObject({
  schema_version: V,
  run_id: Id,
  action_id: Id,
  call_id: Id,
  tool: z.string(),
  path: z.string(),
  args: z.record(z.string(), z.unknown()),
  args_digest: z.string(),
  workspace_digest: z.string(),
  before_hash: FileVersion,
  after_hash: z.string(),
  manifest_digest: z.string(),
  diff: z.string(),
  why: z.string().nullable(),
  /** the policy rule that asked for (or approved) this write, e.g. `policy:interactive:tools.write` (absent in older rows) */
  rule: z.string().optional(),
  /** whatever the tools layer needs to commit this exact write later (validated by tools on use) */
  prepared: z.unknown(),
});
export type ActionRecord = z.infer<typeof ActionRecord>;

export const IntentRecord = z.strictObject({ schema_version: V, before_hash: FileVersion, after_hash: z.string() });
export type IntentRecord = z.infer<typeof IntentRecord>;
export const ReceiptRecord = z.strictObject({
  schema_version: V,
  after_hash: z.string(),
  /** "write" when this process wrote it; "recovered" when resume found the write done and only the receipt missing */
  source: z.enum(["write", "recovered"]),
});
export type ReceiptRecord = z.infer<typeof ReceiptRecord>;

/** Approval records are sealed by policy/ (HMAC over the binding); the ledger stores them as they are. */
export { ApprovalRecord } from "../policy/approvals.js";

export const EventPayload = z.looseObject({ schema_version: V });

/** Parse a JSON column; a foreign schema_version is its own error so it is never papered over. */
export function readRecord<S extends z.ZodType>(schema: S, json: string, what: string): z.infer<S> {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (cause) {
    throw new MiniAgentError("internal", `ledger ${what} record is not JSON`, { cause });
  }
  const version = (raw as { schema_version?: unknown } | null)?.schema_version;
  if (version !== SCHEMA_VERSION) {
    throw new MiniAgentError(
      "schema_version_unsupported",
      `ledger ${what} record has schema_version ${JSON.stringify(version)}; this mini-agent reads ${SCHEMA_VERSION}`,
      {
        details: { record: what, found: version ?? null },
      },
    );
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    throw new MiniAgentError("internal", `ledger ${what} record is malformed: ${describeZodError(parsed.error)}`);
  }
  return parsed.data;
}

export function writeRecord(value: { schema_version: typeof SCHEMA_VERSION }): string {
  return JSON.stringify(value);
}
