import type { RuntimeDeps } from "../deps.js";
import { patchState } from "../deps.js";

/**
 * At daemon start, runs that were in flight when the last process died are
 * marked `interrupted` (resumable) with the status they had, so resume knows
 * whether to re-enter the Verifier or the model. They are never continued
 * silently. Runs awaiting approval stay as they are: nothing was in flight.
 */
export function interruptInFlightRuns(deps: RuntimeDeps): string[] {
  const runs = deps.ledger.runsWithStatus(["running", "verifying"]);
  for (const run of runs) {
    deps.ledger.tx(() => {
      patchState(deps, run.run_id, (s) => void (s.interrupted_from = run.status));
      deps.ledger.updateRun(run.run_id, { status: "interrupted", reason: `interrupted while ${run.status}; resume to continue` });
      deps.trace.append(run.run_id, { type: "run_stopped", payload: { status: "interrupted", interrupted_from: run.status } });
    });
    deps.logger.warn({ runId: run.run_id, was: run.status }, "run interrupted by a restart");
  }
  return runs.map((r) => r.run_id);
}
