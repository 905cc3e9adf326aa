/**
 * The control plane behind the daemon API.
 *
 *   const runs = createRunService({
 *     stateDir,                        // required: ledger, control dirs and approval key live here
 *     executorFactory: (backend, family, runtime) => backend === "container" ? dockerExecutorOf(family, runtime) : localExecutor,  // required
 *     modelFactory,                    // optional: builds live models (may refuse); without it live runs are refused
 *     logger,                          // optional pino logger (default: silent)
 *     clock,                           // optional { now(): number } (default: Date.now)
 *     ledger, verifier, tools, viewBuilder, builtinFixturesDir, crash, approvalKey,  // optional, for tests
 *   });
 *   await runs.recoverAtStartup();     // once, before serving requests
 *   ...                                // RunService methods (runtime/service.ts)
 *   await runs.shutdown();             // on SIGTERM
 *
 * Every method succeeds or throws MiniAgentError and changes nothing, with one
 * deliberate exception: approve() on an action whose binding no longer holds
 * (workspace changed, record tampered) throws `approval_stale` AND tells the
 * model to re-read, and the run goes on (issue 3).
 *
 * Unknown options throw `invalid_request`. Runs execute in the background;
 * `settled(runId)` (not part of RunService) resolves when this process stops
 * driving a run, for tests and scripts.
 */
import fs from "node:fs";
import { fileBaselineTestStore } from "../verifier/baseline-tests.js";
import { pino } from "pino";
import { statePath } from "../config/state-dir.js";
import { DEFAULT_ORCHESTRATOR, TERMINAL_STATUSES } from "../contracts/run.js";
import { Orchestrators } from "../orchestrators/registry.js";
import { Budgets, taskImageFamily } from "../contracts/task-spec.js";
import { describeZodError } from "../contracts/common.js";
import { isMiniAgentError, MiniAgentError } from "../errors.js";
import type { Model } from "../models/model.js";
import { loadReplayFile, ReplayModel } from "../models/replay.js";
import { loadOrCreateApprovalKey } from "../policy/approval-key.js";
import { checkBinding } from "./recovery/binding.js";
import { interruptInFlightRuns } from "./recovery/startup.js";
import { recoverInFlightWrites } from "./recovery/three-state.js";
import { Ledger } from "../store/ledger.js";
import type { RunRecord } from "../store/records.js";
import type { ToolContext } from "../tools/context.js";
import { exportJsonl } from "../trace/export.js";
import { Trace } from "../trace/trace.js";
import { readTraceFile, TraceFileWriter } from "../trace/trace-file.js";
import { approveAction, pendingAction, rejectAction } from "./approval-flow.js";
import { exhaustedBefore } from "./budgets.js";
import { createRun } from "./create-run/index.js";
import { sweepControlRoot } from "./control-dir.js";
import { Drivers } from "./drivers.js";
import { markInterrupted, moveRun } from "./lifecycle.js";
import { checkOptions, defaultVerifier, type RunServiceOptions } from "./options.js";
import { patchState, type RuntimeDeps } from "./deps.js";
import { systemClock } from "./ports.js";
import { runView } from "./run-view.js";
import type { CreateRunInput, RunService, RunView, TraceEvent } from "./service.js";
import { toolContextOf } from "./tool-context.js";
import { defaultToolPort } from "./tools-port.js";
import { defaultViewBuilder } from "./view-input.js";

export type { RunServiceOptions };

export function createRunService(options: RunServiceOptions): RunServiceImpl {
  checkOptions(options);
  return new RunServiceImpl(options);
}

export class RunServiceImpl implements RunService {
  private readonly deps: RuntimeDeps;
  private readonly stateDir: string;
  private readonly ownsLedger: boolean;
  private readonly drivers: Drivers;
  private readonly orchestrators: Orchestrators;
  /** workspaces being claimed by a createRun in progress, and runs with a decision in progress */
  private readonly claims = new Set<string>();
  private readonly busyRuns = new Map<string, Promise<void>>();
  private keyPromise: Promise<Uint8Array> | null = null;
  private stopping = false;

  constructor(private readonly options: RunServiceOptions) {
    fs.mkdirSync(options.stateDir, { recursive: true, mode: 0o700 });
    this.stateDir = fs.realpathSync(options.stateDir);
    const clock = options.clock ?? systemClock;
    const ledger = options.ledger ?? new Ledger(statePath(this.stateDir, "ledger"), () => clock.now(), options.knownSecrets);
    this.ownsLedger = options.ledger === undefined;
    const logger = options.logger ?? pino({ level: "silent" });
    this.deps = {
      ledger,
      // every run also leaves <state>/traces/<run_id>.jsonl, written as it goes
      trace: new Trace(ledger, () => clock.now(), new TraceFileWriter({ stateDir: this.stateDir, ledger, log: logger })),
      tools: { ...defaultToolPort(), ...(options.tools ?? {}) },
      verifier: options.verifier ?? defaultVerifier(logger, () => ledger.knownSecrets()),
      clock,
      logger,
      crash: options.crash ?? (() => {}),
      buildView: options.viewBuilder ?? defaultViewBuilder(),
      stateDir: this.stateDir,
      baselineTests: fileBaselineTestStore(statePath(this.stateDir, "baselineTests")),
      approvalKey: () => this.key(),
    };
    this.orchestrators = new Orchestrators({ stateDir: this.stateDir });
    this.drivers = new Drivers(this.deps, options.executorFactory, this.orchestrators);
    if (options.approvalKey) this.keyPromise = Promise.resolve(options.approvalKey);
  }

  get ledger(): Ledger {
    return this.deps.ledger;
  }

  // ---- RunService -------------------------------------------------------

  async createRun(input: CreateRunInput): Promise<RunView> {
    this.refuseWhenStopping();
    return createRun(
      {
        deps: this.deps,
        stateDir: this.stateDir,
        options: this.options,
        orchestrators: this.orchestrators,
        claims: this.claims,
        liveModel: (runId, task, backend, runtime) => this.liveModel(runId, task, backend, runtime),
        start: (runId, model) => this.drivers.start(runId, "model", model),
        view: (runId) => this.view(runId),
      },
      input,
    );
  }

  getRun(runId: string): RunView {
    return this.view(runId);
  }

  listRuns(): RunView[] {
    return this.deps.ledger.listRuns().map((r) => this.view(r.run_id));
  }

  async approve(runId: string, actionId: string): Promise<RunView> {
    return this.decide(runId, async () => {
      const row = pendingAction(this.deps, runId, actionId);
      const run = this.deps.ledger.getRun(runId);
      checkBinding(this.deps.ledger, runId, this.stateDir);
      const key = await this.key();
      const orchestrator = await this.orchestrators.get(run.record.orchestrator ?? DEFAULT_ORCHESTRATOR);
      try {
        await approveAction(this.deps, runId, row, this.toolCtx(run.record), key, "user", { deferWrite: !orchestrator.writesOnApprove });
      } catch (err) {
        const now = this.deps.ledger.getRun(runId);
        const told = isMiniAgentError(err, "approval_stale") || isMiniAgentError(err, "policy_denied");
        if (told && now.status === "running") this.drivers.start(runId, "model", this.modelFor(runId, now.record));
        else if (now.status === "running")
          markInterrupted(this.deps, runId, "running", `write failed (${isMiniAgentError(err) ? err.code : "internal"}); resume to recover`, { err });
        throw err;
      }
      this.drivers.start(runId, "model", this.modelFor(runId, run.record));
    });
  }

  async reject(runId: string, actionId: string, reason: string): Promise<RunView> {
    if (typeof reason !== "string" || reason.trim().length === 0 || reason.length > 2048) {
      throw new MiniAgentError("invalid_request", "a rejection needs a reason (1-2048 characters)");
    }
    return this.decide(runId, async () => {
      const row = pendingAction(this.deps, runId, actionId);
      const key = await this.key();
      rejectAction(this.deps, runId, row, reason, key);
      this.drivers.start(runId, "model", this.modelFor(runId, this.deps.ledger.getRun(runId).record));
    });
  }

  async resume(runId: string, budgets?: Partial<Budgets>): Promise<RunView> {
    this.refuseWhenStopping();
    const run = this.deps.ledger.getRun(runId);
    if (this.drivers.get(runId)) return this.view(runId);
    if (TERMINAL_STATUSES.includes(run.status)) throw new MiniAgentError("run_not_resumable", `run ${runId} is ${run.status}: ${run.reason ?? ""}`.trim());
    // a copied ledger or a moved workspace is refused before anything else is considered
    checkBinding(this.deps.ledger, runId, this.stateDir);
    if (run.status === "awaiting_approval") {
      throw new MiniAgentError("run_not_resumable", `run ${runId} is waiting for a decision on ${run.state.pending_action_id}; approve or reject it`, {
        details: { pending_action_id: run.state.pending_action_id },
      });
    }
    const raised = Budgets.safeParse({ ...run.record.budgets, ...(budgets ?? {}) });
    if (!raised.success) throw new MiniAgentError("invalid_request", `budgets are invalid:\n${describeZodError(raised.error)}`);
    const phase = run.state.interrupted_from === "verifying" || run.status === "verifying" ? "verifying" : "running";
    if (phase === "running") {
      const out = exhaustedBefore("model", raised.data, run.state.counters);
      if (out) throw new MiniAgentError("budget_exhausted", `the ${out} budget is still used up; resume with a larger ${out}`, { details: { exhausted: out } });
    }
    // the sandbox the run goes on in must be there, as at create: refused, the run stays as it is
    await this.options.executorFactory(run.record.backend, taskImageFamily(run.record.task), run.record.runtime).preflight();
    return this.decide(runId, async () => {
      const model = this.modelFor(runId, run.record);
      this.deps.ledger.tx(() => {
        this.deps.ledger.updateRun(runId, { record: { ...run.record, budgets: raised.data } });
        moveRun(this.deps, runId, phase, `resumed from ${run.status}`, {
          state: (s) => {
            s.stop = { cancelled: false, timed_out: false, exhausted: null };
            s.interrupted_from = phase === "verifying" ? "verifying" : null;
          },
        });
        this.deps.trace.append(runId, { type: "run_resumed", payload: { from: run.status, phase, budgets: raised.data } });
      });
      let outcome: Awaited<ReturnType<typeof recoverInFlightWrites>>;
      try {
        outcome = await recoverInFlightWrites(this.deps, runId, this.toolCtx(run.record), await this.key());
      } catch (err) {
        // the facts on disk and in the ledger are unchanged: the next resume runs the same three-state check
        markInterrupted(this.deps, runId, phase, `recovery failed (${isMiniAgentError(err) ? err.code : "internal"}); resume to retry`, { err });
        throw err;
      }
      if (!outcome.ok) {
        moveRun(this.deps, runId, "uncertain", `uncertain_write: ${outcome.message}`, { stopped: { path: outcome.path } });
        return;
      }
      this.drivers.start(runId, phase === "verifying" ? "verify" : "model", model);
    });
  }

  async cancel(runId: string): Promise<RunView> {
    // an approved write in progress finishes first (writes are never cut in half), then the cancel applies
    await this.busyRuns.get(runId);
    const run = this.deps.ledger.getRun(runId);
    if (run.status === "cancelled") return this.view(runId);
    if (TERMINAL_STATUSES.includes(run.status)) {
      throw new MiniAgentError("run_already_finished", `run ${runId} already ended (${run.status}); there is nothing to cancel`);
    }
    if (this.drivers.get(runId)) {
      this.deps.ledger.tx(() => patchState(this.deps, runId, (s) => void (s.stop.cancelled = true)));
      await this.drivers.abort(runId, "cancel");
    }
    const now = this.deps.ledger.getRun(runId);
    if (!TERMINAL_STATUSES.includes(now.status)) {
      moveRun(this.deps, runId, "cancelled", "cancelled", {
        state: (s) => void (s.stop.cancelled = true),
        stopped: { reason: "cancelled", ...now.state.stop, cancelled: true },
      });
    }
    return this.view(runId);
  }

  async events(runId: string, sinceSeq: number, waitMs: number): Promise<TraceEvent[]> {
    this.deps.ledger.getRun(runId);
    return this.deps.trace.wait(runId, sinceSeq, this.stopping ? 0 : waitMs);
  }

  traceJsonl(runId: string): string {
    const run = this.deps.ledger.getRun(runId);
    return exportJsonl(this.deps.trace.since(runId, 0), { workspace: run.record.workspace, controlDir: run.record.control_dir, stateDir: this.stateDir });
  }

  async traceFile(runId: string): Promise<string> {
    this.deps.ledger.getRun(runId); // an unknown run is run_not_found, not a missing file
    return readTraceFile(this.stateDir, runId);
  }

  async diff(runId: string): Promise<string> {
    return this.deps.tools.diff(this.toolCtx(this.deps.ledger.getRun(runId).record));
  }

  async recoverAtStartup(): Promise<void> {
    interruptInFlightRuns(this.deps);
    const known = new Set(this.deps.ledger.listRuns().map((r) => r.run_id));
    const swept = await sweepControlRoot(statePath(this.stateDir, "controlRoot"), known);
    if (swept.length > 0) this.deps.logger.warn({ swept }, "removed control dirs of runs whose creation did not finish");
  }

  async shutdown(): Promise<void> {
    this.stopping = true;
    await this.drivers.abortAll("shutdown");
    this.deps.trace.wakeAll();
    // let woken long-polls read their last events before the ledger closes
    await new Promise((resolve) => setImmediate(resolve));
    this.deps.trace.closeFiles();
    await this.orchestrators.closeAll();
    if (this.ownsLedger) this.deps.ledger.close();
  }

  // ---- beyond RunService ---------------------------------------------------

  /** Resolves with the run's view once this process is no longer driving it. */
  async settled(runId: string): Promise<RunView> {
    await this.drivers.settled(runId);
    return this.view(runId);
  }

  // ---- internals -------------------------------------------------------------

  private view(runId: string): RunView {
    return runView(this.deps.ledger, runId, this.drivers.get(runId)?.elapsedMs(), this.stateDir);
  }

  private refuseWhenStopping(): void {
    if (this.stopping) throw new MiniAgentError("internal", "the daemon is shutting down");
  }

  private activeRunFor(workspace: string): string | null {
    return this.deps.ledger.activeRunFor(workspace);
  }

  /** One decision at a time per run; a second concurrent one is refused, not queued. */
  private async decide(runId: string, body: () => Promise<void>): Promise<RunView> {
    this.refuseWhenStopping();
    if (this.busyRuns.has(runId)) throw new MiniAgentError("approval_stale", `another decision on run ${runId} is in progress`);
    const work = body();
    this.busyRuns.set(
      runId,
      work.catch(() => {}),
    );
    try {
      await work;
    } finally {
      this.busyRuns.delete(runId);
    }
    return this.view(runId);
  }

  private key(): Promise<Uint8Array> {
    this.keyPromise ??= loadOrCreateApprovalKey(statePath(this.stateDir, "approvalKey"));
    return this.keyPromise;
  }

  private toolCtx(record: RunRecord): ToolContext {
    return toolContextOf(record, () => this.deps.ledger.knownSecrets());
  }

  private replayModel(runId: string, record: RunRecord): Model {
    if (!record.replay_path) throw new MiniAgentError("internal", `run ${runId} has no replay file`);
    return new ReplayModel(loadReplayFile(record.replay_path), () => this.deps.ledger.getRun(runId).replay_cursor);
  }

  private modelFor(runId: string, record: RunRecord): Model | Promise<Model> {
    return record.model === "replay" ? this.replayModel(runId, record) : this.liveModel(runId, record.task, record.backend, record.runtime);
  }

  private async liveModel(runId: string, task: RunRecord["task"], backend: RunRecord["backend"], runtime?: RunRecord["runtime"]): Promise<Model> {
    if (!this.options.modelFactory) throw new MiniAgentError("invalid_request", "live models are not configured in this daemon");
    return this.options.modelFactory({ runId, task, backend, imageFamily: taskImageFamily(task), ...(runtime !== undefined && { runtime }) });
  }
}
