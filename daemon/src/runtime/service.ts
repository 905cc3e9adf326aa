import type { Backend, SandboxLimit } from "../contracts/sandbox.js";
import type { Budgets, TaskSpec } from "../contracts/task-spec.js";
import type { RunStatus, EventType } from "../contracts/run.js";

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
  budgets?: Partial<Budgets>;
}

export interface PendingActionView {
  action_id: string;
  call_id: string;
  tool: string;
  path: string;
  /** unified diff of what the write would do */
  diff: string;
  /** the plan text or reason the model gave, if any */
  why: string | null;
}

export interface VerificationEvidence {
  workspace_digest: string;
  protected_paths_changed: string[];
  tests: {
    discovered: number;
    passed: number;
    failed: number;
    exit_code: number | null;
    timed_out: boolean;
    truncated: boolean;
    /** limits the candidate tests ran into, and the signal that killed their runner (SandboxResult) */
    limits?: SandboxLimit[];
    runner_signal?: string | null;
  };
  acceptance: { passed: string[]; failed: string[]; error: string | null } | null;
  passed: boolean;
  reason: string | null;
  /** human-readable facts behind `reason` (e.g. which cases failed); optional, additive */
  details?: string[];
}

export interface RunView {
  run_id: string;
  status: RunStatus;
  reason: string | null;
  task: string;
  workspace: string;
  model: "replay" | "live";
  backend: Backend;
  counters: { model_turns: number; tool_calls: number; writes: number; elapsed_ms: number; prompt_tokens: number; completion_tokens: number };
  last_tool: string | null;
  tests: { discovered: number; passed: number; failed: number } | null;
  pending_action: PendingActionView | null;
  verification: VerificationEvidence | null;
  last_seq: number;
}

export interface TraceEvent {
  seq: number;
  type: EventType;
  call_id: string | null;
  action_id: string | null;
  payload: Record<string, unknown>;
}

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
  diff(runId: string): Promise<string>;
  /** marks in-flight runs interrupted-and-resumable; called once at daemon start */
  recoverAtStartup(): Promise<void>;
  /** stop accepting work, cancel sandboxes, persist */
  shutdown(): Promise<void>;
}
