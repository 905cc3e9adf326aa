import { Command } from "@langchain/langgraph";
import { TERMINAL_STATUSES } from "../../contracts/run.js";
import { MiniAgentError } from "../../errors.js";
import type { ActiveRun } from "../../runtime/active-run.js";
import type { RuntimeDeps } from "../../runtime/deps.js";
import { failRun } from "../../runtime/steps.js";
import type { DriveMode, Orchestrator, OrchestratorOptions } from "../orchestrator.js";
import { packageVersion } from "../versions.js";
import { Checkpoints, checkpointFile } from "./checkpoints.js";
import { buildGraph, type DriveContext } from "./graph.js";
import { noTracingCallbacks } from "./no-tracing.js";
import { startOf } from "./reenter.js";
import { recursionLimitFor, type ApprovalPause } from "./routes.js";

export { checkpointFile };

/**
 * Runs take their turns through a LangGraph StateGraph (graph.ts) whose
 * pauses are checkpoints in `<state>/orchestrators/langgraph.sqlite`
 * (thread id = run id). Approve and reject only record the decision
 * (writesOnApprove false); the next drive resumes the paused approval node
 * with what the ledger says was decided, and the execution node carries the
 * write out through the ledger.
 */
export function langgraphOrchestrator(options: OrchestratorOptions): Orchestrator {
  const checkpoints = new Checkpoints(checkpointFile(options.stateDir));
  const drives = new Map<string, DriveContext>();
  const graph = buildGraph((runId) => {
    const d = drives.get(runId);
    if (!d) throw new MiniAgentError("internal", `no langgraph drive in progress for ${runId}`);
    return d;
  }, checkpoints.saver);
  let swept = false;

  async function drive(deps: RuntimeDeps, active: ActiveRun, mode: DriveMode): Promise<void> {
    const runId = active.runId;
    const inFlight = new Set<Promise<unknown>>();
    drives.set(runId, {
      deps,
      active,
      track(p) {
        inFlight.add(p);
        void p.then(
          () => inFlight.delete(p),
          () => inFlight.delete(p),
        );
        return p;
      },
    });
    try {
      if (!swept) {
        swept = true;
        await checkpoints.sweep(deps.ledger);
      }
      const run = deps.ledger.getRun(runId);
      const config = {
        configurable: { thread_id: runId },
        recursionLimit: recursionLimitFor(run.record.budgets),
        signal: active.signal,
        // each step's checkpoint is on disk before the next step starts: a kill loses at most the step in progress
        durability: "sync" as const,
        // no LangSmith tracer, whatever the environment says (no-tracing.ts)
        callbacks: noTracingCallbacks(),
      };
      const snapshot = await graph.getState(config);
      const waiting = snapshot.tasks
        .flatMap((t) => t.interrupts)
        .map((i) => i.value as ApprovalPause | undefined)
        .find((v) => typeof v?.action_id === "string");
      const start = startOf({
        mode,
        waitingFor: waiting?.action_id ?? null,
        runStatus: run.status,
        actionStatus: waiting ? (deps.ledger.findAction(runId, waiting.action_id)?.status ?? null) : null,
      });
      deps.logger.info({ runId, start: start.kind, ...(start.kind === "resume" ? start.value : { entry: start.entry }) }, "langgraph drive");
      await graph.invoke(
        start.kind === "resume" ? new Command({ resume: start.value }) : { entry: start.entry, next: "enter", action_id: null, decided: null },
        config,
      );
    } catch (err) {
      // an aborted graph call returns before its step does: the step sees the same signal and ends, then the run's stop is decided
      await Promise.allSettled([...inFlight]);
      // a step that already stopped the run (a cancel seen by the Verifier) leaves nothing for failRun to do
      const status = deps.ledger.getRun(runId).status;
      if (status === "running" || status === "verifying") await failRun(deps, active, err);
      else {
        // the ledger already holds the stop or the pause; the graph's error is kept in the log, not swallowed
        deps.logger.warn({ runId, status, err }, "langgraph call failed after the run stopped or paused");
        await active.closeSession();
      }
    } finally {
      drives.delete(runId);
      await forgetEnded(deps, runId);
      // written once the drive's last checkpoint is on disk: a pause logged here survives a kill
      deps.logger.info({ runId, status: deps.ledger.getRun(runId).status }, "langgraph drive ended");
    }
  }

  async function forgetEnded(deps: RuntimeDeps, runId: string): Promise<void> {
    try {
      if (TERMINAL_STATUSES.includes(deps.ledger.getRun(runId).status)) await checkpoints.forget(runId);
    } catch (err) {
      // a leftover thread is swept at the next daemon's first drive
      deps.logger.warn({ runId, err }, "could not delete the run's checkpoints");
    }
  }

  return {
    name: "langgraph",
    package: { name: "@langchain/langgraph", version: packageVersion("@langchain/langgraph") },
    writesOnApprove: false,
    drive,
    async close() {
      checkpoints.close();
    },
  };
}
