import type { RuntimeDeps } from "../deps.js";
import { markInterrupted } from "../lifecycle.js";

/**
 * At daemon start, runs that were in flight when the last process died are
 * marked `interrupted` (resumable) with the status they had, so resume knows
 * whether to re-enter the Verifier or the model. They are never continued
 * silently. Runs awaiting approval stay as they are: nothing was in flight.
 */
export function interruptInFlightRuns(deps: RuntimeDeps): string[] {
  const runs = deps.ledger.runsWithStatus(["running", "verifying"]);
  for (const run of runs) {
    const phase = run.status === "verifying" ? "verifying" : "running";
    markInterrupted(deps, run.run_id, phase, `interrupted while ${phase}; resume to continue`);
    deps.logger.warn({ runId: run.run_id, was: run.status }, "run interrupted by a restart");
  }
  return runs.map((r) => r.run_id);
}
