import type { RunStatus } from "../contracts/run.js";
import type { StopFacts } from "../store/records.js";
import type { ActiveRun } from "./active-run.js";
import { primaryStop } from "./budgets.js";
import type { RuntimeDeps } from "./deps.js";
import { markInterrupted, moveRun } from "./lifecycle.js";

/**
 * Ends this process's drive of the run: persists status, reason and stop facts,
 * one run_stopped event, and closes the warm sandbox. Must not throw past the
 * ledger write: the caller is the background loop.
 */
export async function stopRun(deps: RuntimeDeps, active: ActiveRun, status: RunStatus, reason: string, facts?: Partial<StopFacts>): Promise<void> {
  moveRun(deps, active.runId, status, reason, {
    state: (s) => {
      s.counters.elapsed_ms = active.elapsedMs();
      s.stop = { ...s.stop, ...(facts ?? {}) };
    },
    stopped: { reason, ...(facts ?? {}) },
  });
  deps.logger.info({ runId: active.runId, status, reason }, "run stopped");
  await active.closeSession();
}

/**
 * A daemon shutdown is not the user's cancel: the run is left `interrupted`
 * with the phase it was in, to be resumed by the next daemon.
 */
export async function interruptRun(deps: RuntimeDeps, active: ActiveRun, phase: "running" | "verifying"): Promise<void> {
  markInterrupted(deps, active.runId, phase, `daemon shut down while ${phase}; resume to continue`, { elapsedMs: active.elapsedMs() });
  await active.closeSession();
}

/** Stops for cancel or an exhausted budget when the facts call for it; true when it stopped. */
export async function stopIfDue(deps: RuntimeDeps, active: ActiveRun, facts: Partial<StopFacts>): Promise<boolean> {
  if (active.abortReason === "shutdown") {
    await interruptRun(deps, active, "running");
    return true;
  }
  const run = deps.ledger.getRun(active.runId);
  const merged: StopFacts = { ...run.state.stop, ...facts, cancelled: run.state.stop.cancelled || active.signal.aborted || facts.cancelled === true };
  const stop = primaryStop(merged);
  if (!stop) return false;
  await stopRun(deps, active, stop.status, stop.reason, merged);
  return true;
}
