import type { ToolCall } from "../contracts/tool-call.js";
import { isMiniAgentError } from "../errors.js";
import type { ActiveRun } from "./active-run.js";
import { exhaustedBefore, nextCallTimeoutMs } from "./budgets.js";
import { askModel, recordDecision } from "./decide.js";
import type { RuntimeDeps } from "./deps.js";
import { stopIfDue, stopRun } from "./stop.js";
import { toolStep } from "./tool-step.js";
import { verifyAndFinish } from "./verify-step.js";

/**
 * The run, as a story: decide -> (plan | propose -> [deny: observation]
 * [ask: persist, await approval, return] | execute -> observe) until a stop.
 * Every stop is persisted with its reason; this function must not throw
 * (it runs in the background), so unexpected failures become `failed`.
 */
export async function driveRun(deps: RuntimeDeps, active: ActiveRun): Promise<void> {
  try {
    const dangling = danglingCall(deps, active.runId);
    if (dangling) {
      // recorded but never answered (the process died during it): nothing was written, so it is run again
      const step = await toolStep(deps, active, dangling, deps.ledger.getRun(active.runId).state.last_plan, { countCall: false });
      if (step === "awaiting_approval") return;
    }
    for (;;) {
      const run = deps.ledger.getRun(active.runId);
      const counters = { ...run.state.counters, elapsed_ms: active.elapsedMs() };
      if (await stopIfDue(deps, active, { exhausted: exhaustedBefore("model", run.record.budgets, counters) })) return;

      const timeoutMs = nextCallTimeoutMs(run.record.budgets, counters.elapsed_ms) ?? 0;
      const turn = await askModel(deps, active, timeoutMs);
      // a call the budget cannot pay for is not recorded: resuming with more budget replays it
      if (turn.decision.kind === "tool") {
        const out = exhaustedBefore("tool", run.record.budgets, { ...counters, model_turns: 0, elapsed_ms: active.elapsedMs() });
        if (out && (await stopIfDue(deps, active, { exhausted: out }))) return;
      }
      const decision = recordDecision(deps, active, turn);
      if (decision.kind === "plan") continue;
      if (decision.kind === "final") return await verifyAndFinish(deps, active, decision.text);

      const step = await toolStep(deps, active, decision.call, run.state.last_plan);
      if (step === "awaiting_approval") return;
      if (step === "out_of_time") {
        await stopIfDue(deps, active, { exhausted: "total_seconds", timed_out: true });
        return;
      }
    }
  } catch (err) {
    await failRun(deps, active, err);
  }
}

async function failRun(deps: RuntimeDeps, active: ActiveRun, err: unknown): Promise<void> {
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
    // the ledger itself failed: nothing more can be persisted; startup recovery marks the run interrupted
    deps.logger.error({ runId: active.runId, err: inner }, "could not persist the run's stop");
    await active.closeSession();
  }
}

/**
 * The last recorded tool call when it has no result yet. Only a crash leaves
 * one: approvals, rejections and stale writes all answer their call.
 */
function danglingCall(deps: RuntimeDeps, runId: string): ToolCall | null {
  const messages = deps.ledger.listMessages(runId);
  const last = messages[messages.length - 1];
  if (last?.role !== "assistant" || last.decision.kind !== "tool") return null;
  return last.decision.call;
}
