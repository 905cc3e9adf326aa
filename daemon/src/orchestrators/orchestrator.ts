import type { OrchestratorName } from "../contracts/run.js";
import type { ActiveRun } from "../runtime/active-run.js";
import type { RuntimeDeps } from "../runtime/deps.js";

/** What a drive starts from: the model's turns, or straight into the host Verifier (a run resumed while verifying). */
export type DriveMode = "model" | "verify";

/**
 * Who takes a run's turns and saves its pauses. An orchestrator decides only
 * HOW turns advance and how a pause is saved and resumed; every step it takes
 * goes through the one set of host services (runtime/steps.ts): the decision
 * source, validation, policy, approvals, the side-effect ledger, the sandbox
 * and the Verifier. It never owns a second copy of any of them, and "done" is
 * still the Verifier's: a framework ending normally is only a request.
 */
export interface Orchestrator {
  readonly name: OrchestratorName;
  /** the package that takes the turns and its installed version; recorded in run_created */
  readonly package: { name: string; version: string };
  /**
   * true: a person's approval carries out the write at once, inside the approve
   * call (manual). false: approve records the sealed approval and hands the run
   * back; the orchestrator's own execution step carries out the approved write
   * through the ledger (runtime/steps.ts executeApprovedWrites), which never
   * writes twice, however often a framework replays that step.
   */
  readonly writesOnApprove: boolean;
  /**
   * Drives the run from what the ledger (and the orchestrator's own saved
   * state) says until it stops or pauses for a person. Runs in the background:
   * it must not throw; an unexpected failure ends the run `failed` (steps.ts failRun).
   */
  drive(deps: RuntimeDeps, active: ActiveRun, mode: DriveMode): Promise<void>;
  /** releases what the orchestrator holds open (a checkpoint database); called once at daemon shutdown */
  close?(): Promise<void>;
}

export interface OrchestratorOptions {
  /** the daemon's state dir: where an orchestrator saves its pauses (checkpoints, serialised run states) */
  stateDir: string;
}
