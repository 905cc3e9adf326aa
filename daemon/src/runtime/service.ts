import type { RunView, TraceEvent } from "../contracts/run-view.js";
import type { ProfileName } from "../contracts/policy.js";
import type { OrchestratorName } from "../contracts/run.js";
import type { Backend, Runtime } from "../contracts/sandbox.js";
import type { Budgets, TaskSpec } from "../contracts/task-spec.js";
import type { CopyLimits } from "../workspace/copy-limits.js";

/**
 * The seam between the daemon's HTTP API (api/) and the control plane (runtime/).
 * The API validates request bodies with zod, then calls exactly these methods.
 * Every method either succeeds or throws MiniAgentError with a stable code and
 * changes nothing.
 */
export interface CreateRunInput {
  /** absolute host path. With `fixtureDir` it must NOT exist yet (repo/ is copied into it). */
  workspace: string;
  fixtureDir?: string;
  taskSpec?: TaskSpec;
  controlDir?: string;
  model: "replay" | "live";
  /** replay file path; default: the fixture's replay.json (the built-in canonical replay) */
  replayPath?: string;
  trustReplayFile: boolean;
  backend: Backend;
  /** `--runtime`: the OCI runtime of the run's sandboxes (absent: the daemon's); refused with trusted_local */
  runtime?: Runtime;
  budgets?: Partial<Budgets>;
  /** globs of forbidden paths the run's sandboxes may still see (`--sandbox-include`); read_file still refuses them */
  sandboxInclude?: string[];
  /** `--image-family`: sets the task's image_family (checked: unknown_image_family) */
  imageFamily?: string;
  /** set when `taskSpec` was drafted from the folder (adhoc/): the trace records the spec and the dirty files */
  adhoc?: { testSource: string; dirtyFiles: string[] };
  /** `--policy-profile`: which profile of the daemon's policy the run gets (default: the file's default_profile) */
  policyProfile?: ProfileName;
  /** `--orchestrator`: who takes the turns (default manual); the services are the same for all */
  orchestrator?: OrchestratorName;
  /** `--max-workspace-bytes/-files`: this run's copy limits (absent: the daemon's) */
  copyLimits?: Partial<CopyLimits>;
}

/** The run view and its parts are defined once, as schemas, in contracts/run-view.ts. */
export type { PendingActionView, RunView, TraceEvent, VerificationEvidence } from "../contracts/run-view.js";

export interface RunService {
  createRun(input: CreateRunInput): Promise<RunView>;
  getRun(runId: string): RunView;
  listRuns(): RunView[];
  approve(runId: string, actionId: string): Promise<RunView>;
  reject(runId: string, actionId: string, reason: string): Promise<RunView>;
  resume(runId: string, budgets?: Partial<Budgets>): Promise<RunView>;
  cancel(runId: string): Promise<RunView>;
  /** events with seq > sinceSeq; waits up to waitMs for at least one when none are there yet */
  events(runId: string, sinceSeq: number, waitMs: number): Promise<TraceEvent[]>;
  /** canonical JSONL export: no secrets, no host absolute paths, no wall-clock noise */
  traceJsonl(runId: string): string;
  /** the run's `<state>/traces/<run_id>.jsonl` as it is on disk (bounded; not_found when there is none) */
  traceFile(runId: string): Promise<string>;
  diff(runId: string): Promise<string>;
  /** marks in-flight runs interrupted-and-resumable; called once at daemon start */
  recoverAtStartup(): Promise<void>;
  /** stop accepting work, cancel sandboxes, persist */
  shutdown(): Promise<void>;
}
