import type { Logger } from "pino";
import type { EffectivePolicy } from "../contracts/policy.js";
import type { Backend, Runtime } from "../contracts/sandbox.js";
import type { TaskSpec } from "../contracts/task-spec.js";
import type { ImageFamily } from "../contracts/test-report.js";
import type { PreparedAction, ToolResult } from "../contracts/tool-call.js";
import type { Model } from "../models/model.js";
import type { Executor, SandboxSession } from "../sandbox/executor.js";
import type { BaselineTestStore } from "../verifier/baseline-tests.js";
import type { CommitOutcome, PrepareOutcome } from "../tools/apply-patch.js";
import type { ToolContext } from "../tools/context.js";
import type { PolicyDecision } from "../policy/classify.js";
import type { ValidatedToolCall, ValidationOutcome } from "../tools/validate.js";
import type { VerificationEvidence } from "./service.js";

/** The clock is injected so budgets and traces can be tested without waiting. */
export interface Clock {
  now(): number;
}
export const systemClock: Clock = { now: () => Date.now() };

/** Everything a tool needs while a run is active: the task context plus time and the warm sandbox. */
export interface ActiveToolContext extends ToolContext {
  runId: string;
  signal: AbortSignal;
  timeoutMs: number;
  executor: Executor;
  /** the run's warm sandbox, opened on first use and closed when the run stops */
  session(): Promise<SandboxSession>;
  /** told which opted-in paths (`--sandbox-include`) entered a sandbox; must not throw */
  onSandboxInclude?: (paths: string[]) => void;
  /** where the baseline's test results are kept: run_tests judges against the baseline as the Verifier does */
  baselineTests?: BaselineTestStore;
}

/**
 * The tools layer as the runtime sees it. The default (tools-port.ts) binds
 * tools/, policy/ and workspace/; a test may swap one member to inject a fault.
 */
export interface ToolPort {
  validate(raw: unknown): ValidationOutcome;
  classify(call: ValidatedToolCall, ctx: ToolContext): PolicyDecision;
  /** an allowed, non-writing tool (read_file, search, show_diff, run_tests) */
  run(call: ValidatedToolCall, ctx: ActiveToolContext): Promise<ToolResult>;
  prepare(call: ValidatedToolCall, ctx: ToolContext, runId: string): Promise<PrepareOutcome>;
  /** re-derives id, digests and hashes from the record: a tampered record fails */
  verifyRecord(raw: unknown): { ok: true; action: PreparedAction } | { ok: false; message: string };
  commit(action: PreparedAction, ctx: ToolContext): Promise<CommitOutcome>;
  /** SHA-256, `absent`, or null when the path cannot be proven safe */
  fileVersion(rel: string, ctx: ToolContext): Promise<string | null>;
  workspaceDigest(ctx: ToolContext): Promise<string>;
  captureBaseline(ctx: ToolContext): Promise<void>;
  diff(ctx: ToolContext): Promise<string>;
}

export interface VerifyInput {
  runId: string;
  task: TaskSpec;
  workspaceRoot: string;
  /** the run's control dir (baseline lives here) */
  controlDir: string;
  /** the task's acceptance assets (fixture control/ copied at run start), or null */
  acceptanceDir: string | null;
  executor: Executor;
  signal: AbortSignal;
  /** the run's `--sandbox-include` globs (the task's forbidden globs are in `task`) */
  sandboxInclude?: readonly string[];
  /** told which opted-in paths entered a Verifier sandbox; must not throw */
  onSandboxInclude?: (paths: string[]) => void;
  /** the run's resolved policy: its verify commands (and the workspace file's) run too */
  policy?: EffectivePolicy;
  /** where the baseline's test results are kept (once per baseline, reused by resume and re-verification) */
  baselineTests?: BaselineTestStore;
}

/** The host Verifier: decides "done" from evidence it measures itself, in a fresh sandbox. */
export type Verifier = (input: VerifyInput) => Promise<VerificationEvidence>;

export interface LiveModelRequest {
  runId: string;
  task: TaskSpec;
  backend: Backend;
  /** the run's image family: the live gate needs a passing isolation report for exactly this family */
  imageFamily: ImageFamily;
  /** the run's OCI runtime (`--runtime`): the live gate needs a report for it; absent: the daemon's */
  runtime?: Runtime;
}

/** Builds a live model; may refuse (isolation_unverified, backend_not_isolated) before anything is created. */
export type ModelFactory = (req: LiveModelRequest) => Model | Promise<Model>;

/**
 * The executor of a backend for one image family (the task's `image_family`, node when
 * absent). The container backend gives each family its own executor, made once and reused,
 * so the warm session, the Verifier and acceptance of a run all use the family's image.
 * `runtime` is the run's own OCI runtime (`--runtime`; absent: the daemon's): one executor
 * per (family, runtime), each with its own HostConfig and pool key. trusted_local has none.
 */
export type ExecutorFactory = (backend: Backend, imageFamily: ImageFamily, runtime?: Runtime) => Executor;

export const CRASH_POINTS = ["after_intent", "after_write_before_receipt", "during_verifying"] as const;
export type CrashPoint = (typeof CRASH_POINTS)[number];
/** Test-only: called at each named crash point; the default does nothing. */
export type CrashHook = (point: CrashPoint) => void;

export type RuntimeLogger = Pick<Logger, "info" | "warn" | "error" | "debug" | "child">;
