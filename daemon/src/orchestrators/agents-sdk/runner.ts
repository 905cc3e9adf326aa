import { TERMINAL_STATUSES } from "../../contracts/run.js";
import { MiniAgentError } from "../../errors.js";
import type { ActiveRun } from "../../runtime/active-run.js";
import type { RuntimeDeps } from "../../runtime/deps.js";
import { failRun, finishPending, verifyAndFinish } from "../../runtime/steps.js";
import { stopIfDue } from "../../runtime/stop.js";
import type { DriveMode } from "../orchestrator.js";
import { hostModel } from "./host-model.js";
import { hostTools } from "./host-tools.js";
import { applyLedgerDecisions } from "./resume.js";
import type { SavedRunStates } from "./saved-state.js";
import type { DriveScope } from "./scope.js";
import { Agent, MaxTurnsExceededError, type ModelProvider, RunState, Runner } from "./sdk.js";

/** The agent's name is part of a saved RunState: a state is resumed only by an agent of this name. */
const AGENT_NAME = "mini-agent";

/** No model is ever looked up by name: every agent carries our Model instance, and this says so loudly if that ever changes. */
const NO_PROVIDER: ModelProvider = {
  getModel: (name?: string) => {
    throw new MiniAgentError("internal", `the agents-sdk orchestrator has no model provider (asked for ${name ?? "the default model"})`);
  },
};

/**
 * One drive of a run by the SDK's Runner: start (fresh, or from the RunState
 * saved at the last approval pause once the ledger's decision is applied to
 * it), run until the Runner pauses for a person (save its state) or ends
 * (final_output goes to the host Verifier, which alone decides "done").
 * Never throws: an unexpected failure ends the run through failRun.
 */
export async function driveWithSdk(states: SavedRunStates, sdkVersion: string, deps: RuntimeDeps, active: ActiveRun, mode: DriveMode): Promise<void> {
  const runId = active.runId;
  try {
    if (mode === "verify") return await verifyAndFinish(deps, active);
    const scope: DriveScope = { deps, active, halted: null };
    const run = deps.ledger.getRun(runId);
    const tools = hostTools(scope, run.record.backend);
    const model = hostModel(scope, new Set(tools.map((t) => t.name)));
    const agent = new Agent({ name: AGENT_NAME, instructions: "", model, tools, modelSettings: { parallelToolCalls: false, retry: { maxRetries: 0 } } });
    const start = await startingPoint(states, sdkVersion, scope, agent);
    if (start === null) return;
    const runner = new Runner({ tracingDisabled: true, modelProvider: NO_PROVIDER, model });
    let result;
    try {
      // one SDK turn takes at least one of our model turns, so with this the SDK never stops a run our budgets let go on
      result = await runner.run(agent, start, { maxTurns: run.record.budgets.model_turns + 1, signal: active.signal });
    } catch (err) {
      if (scope.halted) return await states.remove(runId);
      if (err instanceof MaxTurnsExceededError) {
        await stopIfDue(deps, active, { exhausted: "model_turns" });
        return await states.remove(runId);
      }
      throw err;
    }
    // a host step ended the drive (the ledger says how); a later drive starts fresh from the ledger
    if (scope.halted) return await states.remove(runId);
    if (active.signal.aborted) throw new MiniAgentError("cancelled", "cancelled between the Runner's steps");
    if (result.interruptions.length > 0) {
      // the run is already awaiting_approval in the ledger (proposeCall); the state only says where the SDK paused
      try {
        await states.save({ schema_version: 1, run_id: runId, sdk_version: sdkVersion, state: result.state.toString() });
        deps.logger.info({ runId, orchestrator: "agents-sdk" }, "Runner paused for approval; RunState saved");
      } catch (err) {
        // not fatal: without a saved state the next drive starts a fresh Runner from the ledger
        await states.remove(runId).catch(() => undefined);
        deps.logger.warn({ runId, err }, "could not save the RunState at the approval pause; the next drive starts from the ledger");
      }
      return;
    }
    await states.remove(runId);
    deps.logger.info({ runId, orchestrator: "agents-sdk", runner: "finished" }, "Runner finished with a final_output; the host Verifier decides");
    // final_output is a request, not completion: the host Verifier decides
    await verifyAndFinish(deps, active, typeof result.finalOutput === "string" ? result.finalOutput : "");
  } catch (err) {
    await failRun(deps, active, err);
  } finally {
    await forgetWhenEnded(states, deps, runId);
  }
}

/** A run that has ended is never driven again: its saved pause goes with it. Must not throw (the drive's last step). */
async function forgetWhenEnded(states: SavedRunStates, deps: RuntimeDeps, runId: string): Promise<void> {
  try {
    if (TERMINAL_STATUSES.includes(deps.ledger.getRun(runId).status)) await states.remove(runId);
  } catch (err) {
    deps.logger.warn({ runId, err }, "could not remove the saved RunState of an ended run");
  }
}

/**
 * Where the Runner starts: the saved RunState with the ledger's decision
 * applied, or (no usable saved state) a fresh Runner after the shared step
 * that carries out what a decision left (finishPending), since the model's
 * view comes from the ledger either way. null: that step stopped the run.
 */
async function startingPoint(states: SavedRunStates, sdkVersion: string, scope: DriveScope, agent: Agent): Promise<RunState<unknown, Agent> | string | null> {
  const { deps, active } = scope;
  const runId = active.runId;
  const loaded = await states.load(runId);
  if (loaded.kind === "found" && loaded.saved.sdk_version === sdkVersion) {
    let state: RunState<unknown, Agent> | null = null;
    try {
      state = await RunState.fromString<unknown, Agent>(agent, loaded.saved.state);
    } catch (err) {
      deps.logger.warn({ runId, err }, "saved RunState does not load; starting from the ledger");
    }
    if (state) {
      const disagreement = await applyLedgerDecisions(scope, state);
      if (disagreement === null) {
        deps.logger.info({ runId, orchestrator: "agents-sdk", resumed: "saved_run_state" }, "resuming the saved RunState with the ledger's decision");
        return state;
      }
      deps.logger.info({ runId, why: disagreement }, "saved RunState disagrees with the ledger; starting from the ledger");
    }
  } else if (loaded.kind !== "absent") {
    deps.logger.warn(
      { runId, why: loaded.kind === "invalid" ? loaded.why : "written by another SDK release" },
      "saved RunState not used; starting from the ledger",
    );
  }
  await states.remove(runId);
  const outcome = await finishPending(deps, active);
  if (outcome !== "continue") return null;
  return `mini-agent run ${runId}`;
}
