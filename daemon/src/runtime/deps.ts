import type { Ledger } from "../store/ledger.js";
import type { RunRecord, RunState } from "../store/records.js";
import type { Trace } from "../trace/trace.js";
import type { Clock, CrashHook, RuntimeLogger, ToolPort, Verifier } from "./ports.js";
import type { ViewBuilder } from "./view-input.js";
import type { BaselineTestStore } from "../verifier/baseline-tests.js";

/** What every runtime step shares: one object, built once by the service. */
export interface RuntimeDeps {
  ledger: Ledger;
  trace: Trace;
  tools: ToolPort;
  verifier: Verifier;
  clock: Clock;
  logger: RuntimeLogger;
  crash: CrashHook;
  buildView: ViewBuilder;
  stateDir: string;
  /** the baseline's test results, kept once per baseline (verifier/baseline-tests.ts) for run_tests and the Verifier alike */
  baselineTests: BaselineTestStore;
  /** the daemon's approval-sealing key (policy/approval-key.ts), loaded once: a write the policy approves is sealed like one a person approves, and a command approved earlier is re-checked with it before it runs */
  approvalKey(): Promise<Uint8Array>;
}

/** Reads, changes and writes a run's state in the caller's transaction. */
export function patchState(deps: RuntimeDeps, runId: string, change: (s: RunState, r: RunRecord) => void): RunState {
  const run = deps.ledger.getRun(runId);
  const next = structuredClone(run.state);
  change(next, run.record);
  deps.ledger.updateRun(runId, { state: next });
  return next;
}
