import fs from "node:fs";
import path from "node:path";
import { taskImageFamily } from "../contracts/task-spec.js";
import { isMiniAgentError } from "../errors.js";
import type { Model } from "../models/model.js";
import type { Executor } from "../sandbox/executor.js";
import { ActiveRun } from "./active-run.js";
import type { RuntimeDeps } from "./deps.js";
import { toolContextOf } from "./tool-context.js";
import { markInterrupted } from "./lifecycle.js";
import type { ExecutorFactory } from "./ports.js";
import { DEFAULT_ORCHESTRATOR } from "../contracts/run.js";
import type { Orchestrators } from "../orchestrators/registry.js";

interface Driving {
  active: ActiveRun;
  done: Promise<void>;
}

/**
 * The runs this process is driving in the background, one ActiveRun each.
 * Several runs go at once; a run is driven by at most one loop.
 */
export class Drivers {
  private readonly driving = new Map<string, Driving>();

  constructor(
    private readonly deps: RuntimeDeps,
    private readonly executorFactory: ExecutorFactory,
    private readonly orchestrators: Orchestrators,
  ) {}

  get(runId: string): ActiveRun | undefined {
    return this.driving.get(runId)?.active;
  }

  /** Starts driving a run in the background; the promise never rejects. */
  start(runId: string, mode: "model" | "verify", model: Model | Promise<Model>): void {
    const deps = this.deps;
    const run = deps.ledger.getRun(runId);
    const phase = mode === "verify" ? "verifying" : "running";
    const acceptance = path.join(run.record.control_dir, "acceptance");
    let executor: Executor;
    try {
      // the family is part of the stored task, so a resumed or recovered run gets the same image
      // and so is the runtime (absent: the daemon's), so the Verifier's fresh sandbox uses it too
      executor = this.executorFactory(run.record.backend, taskImageFamily(run.record.task), run.record.runtime);
    } catch (err) {
      markInterrupted(deps, runId, phase, `sandbox unavailable (${isMiniAgentError(err) ? err.code : "internal"}); resume when fixed`, { err });
      return;
    }
    const ctx = toolContextOf(run.record, () => deps.ledger.knownSecrets());
    const active = new ActiveRun(runId, executor, ctx, fs.existsSync(acceptance) ? acceptance : null, deps.clock, run.state.counters.elapsed_ms);
    const entry: Driving = { active, done: Promise.resolve() };
    this.driving.set(runId, entry);
    entry.done = (async () => {
      try {
        active.model = await model;
      } catch (err) {
        // e.g. the live gate refused after a restart: resumable once the cause is fixed
        markInterrupted(deps, runId, phase, `model unavailable (${isMiniAgentError(err) ? err.code : "internal"}); resume when fixed`, { err });
        return;
      }
      const name = run.record.orchestrator ?? DEFAULT_ORCHESTRATOR;
      let orchestrator: Awaited<ReturnType<Orchestrators["get"]>>;
      try {
        orchestrator = await this.orchestrators.get(name);
      } catch (err) {
        markInterrupted(deps, runId, phase, `orchestrator ${name} unavailable (${isMiniAgentError(err) ? err.code : "internal"}); resume when fixed`, { err });
        return;
      }
      await orchestrator.drive(deps, active, mode);
    })()
      .catch((err) => deps.logger.error({ runId, err }, "run driver failed"))
      .finally(() => {
        if (this.driving.get(runId) === entry) this.driving.delete(runId);
      });
  }

  /** Resolves once this process is no longer driving the run (a decision may start a new drive meanwhile). */
  async settled(runId: string): Promise<void> {
    for (let d = this.driving.get(runId); d; d = this.driving.get(runId)) await d.done;
  }

  async abort(runId: string, reason: "cancel" | "shutdown"): Promise<void> {
    const d = this.driving.get(runId);
    if (!d) return;
    d.active.abortFor(reason);
    await d.done;
  }

  async abortAll(reason: "cancel" | "shutdown"): Promise<void> {
    await Promise.all([...this.driving.keys()].map((id) => this.abort(id, reason)));
  }
}
