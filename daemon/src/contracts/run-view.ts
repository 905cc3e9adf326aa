import * as z from "zod/mini";
import { OrchestratorName, RunStatus } from "./run.js";
import { Backend, Runtime, SandboxLimit } from "./sandbox.js";
import { VerifierReason } from "./verifier-reason.js";

/**
 * What the daemon tells anyone about a run: the one definition. The daemon
 * builds it (runtime/run-view.ts) and persists the evidence in it (store/),
 * the API sends it, the client parses it; every side takes its types from
 * these schemas. It was once defined twice and the client's copy dropped
 * `details`, so users saw `failed: verification_failed` and never why.
 *
 * zod/mini (see contracts/run.ts). Objects are z.object, not strict: unknown
 * keys are dropped, so an older client keeps working when the daemon adds a
 * field; a test checks that every field the daemon sends survives the parse.
 */

export const PendingActionView = z.object({
  action_id: z.string(),
  call_id: z.string(),
  tool: z.string(),
  path: z.string(),
  /** unified diff of what the write would do */
  diff: z.string(),
  /** the plan text or reason the model gave, if any */
  why: z.nullable(z.string()),
  /** a pending run_command (path and diff are empty): its argv and the policy rule that asked */
  command: z.optional(z.object({ argv: z.array(z.string()), rule: z.string() })),
  /** the policy rule that asked, e.g. `policy:interactive:tools.write` (absent for actions from before policies) */
  rule: z.optional(z.string()),
});
export type PendingActionView = z.infer<typeof PendingActionView>;

/**
 * The verdict of a green exit-code-only run, word for word (issue 11). Judged
 * in tools/test-verdict.ts; here (zod/mini, which the client loads) so that the
 * client shows the same words.
 */
export const EXIT_CODE_ONLY_PASSED = "tests passed by exit code only; no test count was available";

/**
 * The last run_tests' figures. An exit-code-only preset has no count: the zeros
 * are placeholders, `exit_code_only` is true and `green` says pass or fail; it is
 * never shown as "0/0" or "N tests passed".
 */
export const TestCounts = z.object({
  discovered: z.number(),
  passed: z.number(),
  failed: z.number(),
  exit_code_only: z.optional(z.boolean()),
  green: z.optional(z.boolean()),
  /** units that could not load (collection errors): not tests, never counted in discovered */
  load_errors: z.optional(z.number()),
});
export type TestCounts = z.infer<typeof TestCounts>;

/** A secret in the run's diff: the file and line and the rule that matched; the value is never kept. */
export const SecretInDiff = z.object({ path: z.string(), line: z.number(), rule: z.string() });
export type SecretInDiff = z.infer<typeof SecretInDiff>;

/** One extra verify command's result; `name` carries its source (`task:lint`, `policy:tsc`, `workspace:vet`). */
export const VerifyCommandResult = z.object({
  name: z.string(),
  argv: z.array(z.string()),
  exit_code: z.nullable(z.number()),
  passed: z.boolean(),
  timed_out: z.boolean(),
  truncated: z.boolean(),
  duration_ms: z.number(),
  /** the verdict in words, as run_tests and the candidate tests say it */
  message: z.string(),
});
export type VerifyCommandResult = z.infer<typeof VerifyCommandResult>;

/**
 * The result's tests against the baseline's, test by test (tools/test-compare.ts). Each list
 * holds test ids as the runner names them, at most TEST_LIST_SHOWN; `counts` holds every
 * list's whole size. Never test output. SWE-bench's names: fail_to_pass is FAIL_TO_PASS.
 */
export const TEST_LIST_SHOWN = 200;
export const TEST_LIST_NAMES = [
  "fail_to_pass",
  "pass_to_pass",
  "pass_to_fail",
  "fail_to_fail",
  "new_passed",
  "new_failed",
  "skipped_before",
  "skipped_new",
  "disappeared",
  "unstable",
] as const;
export const TestListName = z.enum(TEST_LIST_NAMES);

/**
 * How the `unstable` list is said wherever a person reads it (the Verifier's
 * message, `status`, `why`, eval's lines): one home, so they never disagree.
 * It counts ids, not tests: a test whose title changes from run to run shows
 * one id in each of the baseline's two runs, so 3 such tests are 6 ids. Which
 * ids are one test cannot be told: titles are free text (what changes may be
 * any part of them), and a test that ran in one run only is one id alone;
 * pairing ids by how they look would also pair a deleted test with a new one.
 */
export function unstableSaid(ids: number): string {
  return `${ids} test id${ids === 1 ? "" : "s"} changed between two runs of the baseline (unstable: a test whose title changes shows one id in each run; not looked for, not held against the run)`;
}
export type TestListName = z.infer<typeof TestListName>;
const IdList = z.array(z.string());
export const TestDelta = z.object({
  /** compared: the baseline's test list was read; unavailable: it was not (`baseline_note` says why), every result test is new */
  baseline: z.enum(["compared", "unavailable"]),
  baseline_note: z.optional(z.string()),
  /** the baseline came from the cache (the same baseline, command, image and layers ran before) */
  baseline_cached: z.optional(z.boolean()),
  fail_to_pass: IdList,
  pass_to_pass: IdList,
  pass_to_fail: IdList,
  fail_to_fail: IdList,
  new_passed: IdList,
  new_failed: IdList,
  skipped_before: IdList,
  skipped_new: IdList,
  disappeared: IdList,
  /**
   * baseline ids not in the result that ran in only ONE of the baseline's two runs (a title holding a
   * random value or the time): not looked for, never `disappeared`; absent in evidence from before two runs
   */
  unstable: z.optional(IdList),
  counts: z.record(z.string(), z.number()),
  /** the task's own lists (`must_pass`, FAIL_TO_PASS, PASS_TO_PASS): which of their ids passed after the run and which did not */
  required: z.optional(
    z.object({
      fail_to_pass: z.object({ success: IdList, failure: IdList }),
      pass_to_pass: z.object({ success: IdList, failure: IdList }),
    }),
  ),
});
export type TestDelta = z.infer<typeof TestDelta>;

/** The runner's own first words when it failed before or outside its tests (collection errors, a missing library, no report): bounded, redacted. */
export const RunnerError = z.object({
  /** e.g. "4 collection errors", "no report written", "the runner exited 127 before any test" */
  summary: z.string(),
  /** first lines of the runner's own error output, each unit's message for load errors */
  lines: z.array(z.string()),
  load_error_count: z.optional(z.number()),
});
export type RunnerError = z.infer<typeof RunnerError>;

/**
 * SWE-bench's report of one instance (its harness's `report.json` shape), so a result can be read by
 * the field's tools: tests_status per list with success/failure ids, and resolved.
 */
export const SweBenchStatus = z.object({
  patch_exists: z.boolean(),
  patch_successfully_applied: z.boolean(),
  resolved: z.boolean(),
  tests_status: z.object({
    FAIL_TO_PASS: z.object({ success: IdList, failure: IdList }),
    PASS_TO_PASS: z.object({ success: IdList, failure: IdList }),
    FAIL_TO_FAIL: z.object({ success: IdList, failure: IdList }),
    PASS_TO_FAIL: z.object({ success: IdList, failure: IdList }),
  }),
});
export type SweBenchStatus = z.infer<typeof SweBenchStatus>;

/** The host Verifier's verdict and the facts behind it (verifier/verify.ts). Never holds an expected answer. */
export const VerificationEvidence = z.object({
  workspace_digest: z.string(),
  protected_paths_changed: z.array(z.string()),
  tests: z.object({
    discovered: z.number(),
    passed: z.number(),
    failed: z.number(),
    exit_code: z.nullable(z.number()),
    timed_out: z.boolean(),
    truncated: z.boolean(),
    /** limits the candidate tests ran into, and the signal that killed their runner (SandboxResult) */
    limits: z.optional(z.array(SandboxLimit)),
    runner_signal: z.optional(z.nullable(z.string())),
    /**
     * the verify preset is exit-code only: no test count exists (the counts are 0 and
     * must never be shown as "0/0" or "N tests passed"); only the exit status was judged
     */
    exit_code_only: z.optional(z.boolean()),
    skipped: z.optional(z.number()),
    /** test by test against the baseline (absent for exit-code-only presets and evidence from before it was kept) */
    compare: z.optional(TestDelta),
    /** what the runner said when it failed before or outside its tests */
    runner_error: z.optional(RunnerError),
  }),
  /** hidden acceptance case ids (ids only) */
  acceptance: z.nullable(z.object({ passed: z.array(z.string()), failed: z.array(z.string()), error: z.nullable(z.string()) })),
  passed: z.boolean(),
  /** the headline reason when passed is false: one of the Verifier's reasons (contracts/verifier-reason.ts) */
  reason: z.nullable(VerifierReason),
  /** human-readable facts behind `reason`, in the order they were found */
  details: z.optional(z.array(z.string())),
  /** paths that differ from the run-start baseline; 0 means the run changed nothing (absent in evidence from before it was recorded) */
  changed_path_count: z.optional(z.number()),
  /** when reason is false_green: why the green was not real */
  false_green: z.optional(z.nullable(z.string())),
  /** secrets found in the added lines of the final diff: where and which rule, never the value (verifier/secret-scan.ts) */
  // not `secrets_*`: the ledger's redaction replaces whatever sits under a secret-looking
  // field name (redact/rules.ts SECRET_KEY), which turned this list into a string
  diff_scan_hits: z.optional(z.array(SecretInDiff)),
  /** the extra verify commands (task, daemon policy, workspace policy), each in its own fresh sandbox, in the order run */
  verify_commands: z.optional(z.array(VerifyCommandResult)),
});
export type VerificationEvidence = z.infer<typeof VerificationEvidence>;

export const BudgetName = z.enum(["model_turns", "tool_calls", "total_seconds", "tokens"]);
export type BudgetName = z.infer<typeof BudgetName>;

/** The budget that stopped the run: which one, what was used and what it allowed (seconds for total_seconds). */
export const ExhaustedBudget = z.object({ name: BudgetName, used: z.number(), limit: z.number() });
export type ExhaustedBudget = z.infer<typeof ExhaustedBudget>;

export const RunView = z.object({
  run_id: z.string(),
  status: RunStatus,
  reason: z.nullable(z.string()),
  task: z.string(),
  workspace: z.string(),
  model: z.enum(["replay", "live"]),
  backend: Backend,
  /** the OCI runtime the run asked for (`--runtime`); absent: the daemon's configured one */
  runtime: z.optional(Runtime),
  /** the sandbox image family the run's code runs in (the task's image_family; node when the task names none) */
  image_family: z.optional(z.string()),
  /** who takes the run's turns (`--orchestrator`; manual for runs made before orchestrators) */
  orchestrator: z.optional(OrchestratorName),
  counters: z.object({
    model_turns: z.number(),
    tool_calls: z.number(),
    writes: z.number(),
    elapsed_ms: z.number(),
    prompt_tokens: z.number(),
    completion_tokens: z.number(),
  }),
  last_tool: z.nullable(z.string()),
  tests: z.nullable(TestCounts),
  pending_action: z.nullable(PendingActionView),
  verification: z.nullable(VerificationEvidence),
  /** set while the status is budget_exhausted */
  exhausted_budget: z.nullable(ExhaustedBudget),
  last_seq: z.number(),
  /** an ad-hoc run's drafted task spec (contracts/task-spec.ts), so a user sees what the daemon decided */
  task_spec: z.optional(z.record(z.string(), z.unknown())),
  /** workspace paths the run changed vs its baseline (its written actions), sorted; `paths` holds at most CHANGED_FILES_SHOWN, `count` all */
  changed_files: z.optional(z.object({ paths: z.array(z.string()), count: z.number() })),
  /** absolute path of the run's trace file (`<state>/traces/<run_id>.jsonl`), once it exists */
  trace_file: z.optional(z.string()),
  /** absolute paths of the full output of the run's latest run_tests and Verifier test run (tools/output-artifact.ts), those that exist */
  test_output: z.optional(z.strictObject({ run_tests: z.optional(z.string()), verifier: z.optional(z.string()) })),
  /** the result as SWE-bench's harness reports an instance (verifier/swebench-status.ts), once the run has ended */
  swebench: z.optional(SweBenchStatus),
});
export type RunView = z.infer<typeof RunView>;

/** How many changed paths a run view lists (the count is always whole). */
export const CHANGED_FILES_SHOWN = 50;

export const TraceEvent = z.object({
  seq: z.number(),
  // any type, not only EventType: an event a newer daemon added reads here and is
  // then skipped by readTraceEvent (contracts/trace-event.ts), never a refused answer
  type: z.string(),
  call_id: z.nullable(z.string()),
  action_id: z.nullable(z.string()),
  payload: z.record(z.string(), z.unknown()),
});
export type TraceEvent = z.infer<typeof TraceEvent>;
