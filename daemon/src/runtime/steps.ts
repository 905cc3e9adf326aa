import type { Decision } from "../contracts/decision.js";
import type { ToolCall } from "../contracts/tool-call.js";
import { isMiniAgentError } from "../errors.js";
import type { ActiveRun } from "./active-run.js";
import { exhaustedBefore, nextCallTimeoutMs } from "./budgets.js";
import { askModel, recordDecision } from "./decide.js";
import type { RuntimeDeps } from "./deps.js";
import { moveRun } from "./lifecycle.js";
import { recoverInFlightWrites } from "./recovery/three-state.js";
import { stopIfDue, stopRun } from "./stop.js";
import { toolStep } from "./tool-step.js";
import { verifyAndFinish } from "./verify-step.js";

/**
 * The steps of a run, as every orchestrator takes them (orchestrators/): our
 * own loop (loop.ts) and the framework adapters call exactly these, so the
 * decision source, validation, policy, approvals, the ledger, the sandbox and
 * the Verifier exist once. What an orchestrator adds is only the order of the
 * steps and where a pause is saved.
 *
 * Each step reads what it needs from the ledger and records what it did before
 * it returns, so a step repeated after a crash or by a framework's replay finds
 * its own work done.
 */

/** How a step left the run: go on with the next turn, paused for a person, or stopped (terminal or interrupted). */
export type StepOutcome = "continue" | "paused" | "stopped";

export { verifyAndFinish };

/**
 * One model turn: stops first when a budget or a cancel says so, asks the
 * decision source (retrying transient failures), and records the decision.
 * null: the run stopped instead. A tool call the budget cannot pay for is not
 * recorded, so a resume with more budget replays it.
 */
export async function nextDecision(deps: RuntimeDeps, active: ActiveRun): Promise<Decision | null> {
  const run = deps.ledger.getRun(active.runId);
  const counters = { ...run.state.counters, elapsed_ms: active.elapsedMs() };
  if (await stopIfDue(deps, active, { exhausted: exhaustedBefore("model", run.record.budgets, counters) })) return null;
  const turn = await askModel(deps, active, nextCallTimeoutMs(run.record.budgets, counters.elapsed_ms) ?? 0);
  if (turn.decision.kind === "tool") {
    const out = exhaustedBefore("tool", run.record.budgets, { ...counters, model_turns: 0, elapsed_ms: active.elapsedMs() });
    if (out && (await stopIfDue(deps, active, { exhausted: out }))) return null;
  }
  return recordDecision(deps, active, turn);
}

/**
 * One proposed tool call through validation, policy and (for what is allowed)
 * the sandbox, observed in the ledger. "paused": a write or command waits for a
 * person (persisted, with approval_requested).
 */
export async function proposeCall(deps: RuntimeDeps, active: ActiveRun, call: ToolCall, opts: { countCall?: boolean } = {}): Promise<StepOutcome> {
  const step = await toolStep(deps, active, call, deps.ledger.getRun(active.runId).state.last_plan, opts);
  if (step === "awaiting_approval") return "paused";
  if (step === "out_of_time") {
    await stopIfDue(deps, active, { exhausted: "total_seconds", timed_out: true });
    return "stopped";
  }
  return "continue";
}

/**
 * Carries out what a person's decision left to do, through the ledger: every
 * approved write without a receipt goes through the three-state check (equal
 * to before: write once; equal to after: receipt only; else `uncertain`), so
 * a step replayed after the write never writes again. Then a recorded call
 * with no answer (an approved command, or a call cut short by a crash) is run
 * again; nothing was written for it. Safe to call at any time; does nothing
 * when nothing is left.
 */
export async function finishPending(deps: RuntimeDeps, active: ActiveRun): Promise<StepOutcome> {
  const recovery = await recoverInFlightWrites(deps, active.runId, active.ctx, await deps.approvalKey());
  if (!recovery.ok) {
    moveRun(deps, active.runId, "uncertain", `uncertain_write: ${recovery.message}`, { stopped: { path: recovery.path } });
    await active.closeSession();
    return "stopped";
  }
  const dangling = danglingCall(deps, active.runId);
  if (!dangling) return "continue";
  // recorded but never answered: nothing was written for it, so it is run again (and not counted twice)
  return proposeCall(deps, active, dangling, { countCall: false });
}

/** The decision that ends a step: what to do after `nextDecision`. */
export async function takeDecision(deps: RuntimeDeps, active: ActiveRun, decision: Decision): Promise<StepOutcome> {
  if (decision.kind === "plan") return "continue";
  if (decision.kind === "final") {
    await verifyAndFinish(deps, active, decision.text);
    return "stopped";
  }
  return proposeCall(deps, active, decision.call);
}

/**
 * The last recorded tool call when it has no result yet. Only a crash or an
 * approved command leaves one: approvals of writes, rejections and stale
 * writes all answer their call.
 */
export function danglingCall(deps: RuntimeDeps, runId: string): ToolCall | null {
  const messages = deps.ledger.listMessages(runId);
  const last = messages[messages.length - 1];
  if (last?.role !== "assistant" || last.decision.kind !== "tool") return null;
  return last.decision.call;
}

/**
 * The one way a drive ends on an unexpected error: a cancel stays a cancel
 * (with the deadline fact when it passed too), anything else is `failed` with
 * the error's code. Never throws; if even the ledger fails, startup recovery
 * marks the run interrupted.
 */
export async function failRun(deps: RuntimeDeps, active: ActiveRun, err: unknown): Promise<void> {
  try {
    if (active.signal.aborted || isMiniAgentError(err, "cancelled")) {
      // both facts are kept when the deadline passed as well; cancelled stays the primary
      const budgets = deps.ledger.getRun(active.runId).record.budgets;
      const timedOut = nextCallTimeoutMs(budgets, active.elapsedMs()) === null;
      if (await stopIfDue(deps, active, { cancelled: true, timed_out: timedOut })) return;
    }
    const code = isMiniAgentError(err) ? err.code : "internal";
    deps.logger.error({ runId: active.runId, err }, "run failed");
    await stopRun(deps, active, "failed", code === "model_error" ? `model_error: ${(err as Error).message}` : code);
  } catch (inner) {
    deps.logger.error({ runId: active.runId, err: inner }, "could not persist the run's stop");
    await active.closeSession();
  }
}
