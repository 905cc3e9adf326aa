import type { ActiveRun } from "./active-run.js";
import type { RuntimeDeps } from "./deps.js";
import { danglingCall, failRun, nextDecision, proposeCall, takeDecision } from "./steps.js";

/**
 * mini-agent's own orchestrator, as a story: decide -> (plan | propose ->
 * [deny: observation] [ask: persist, await approval, return] | execute ->
 * observe) until a stop. Every step is a host step (steps.ts); every stop is
 * persisted with its reason. This function must not throw (it runs in the
 * background), so unexpected failures become `failed`.
 */
export async function driveRun(deps: RuntimeDeps, active: ActiveRun): Promise<void> {
  try {
    const dangling = danglingCall(deps, active.runId);
    // recorded but never answered (the process died during it): nothing was written, so it is run again
    if (dangling && (await proposeCall(deps, active, dangling, { countCall: false })) !== "continue") return;
    for (;;) {
      const decision = await nextDecision(deps, active);
      if (!decision) return;
      if ((await takeDecision(deps, active, decision)) !== "continue") return;
    }
  } catch (err) {
    await failRun(deps, active, err);
  }
}
