import { canMoveRun, INITIAL_RUN_STATUS, RUN_TRANSITIONS, type RunStatus } from "../contracts/run.js";
import { MiniAgentError } from "../errors.js";
import type { RunRow } from "../store/ledger.js";
import type { RunState } from "../store/records.js";
import { patchState, type RuntimeDeps } from "./deps.js";

/**
 * The one writer of a run's status (issue 10 item 12: it was written from nine
 * places in seven files, with three near-copies of "mark interrupted"). Every
 * move is checked against RUN_TRANSITIONS (contracts/run.ts) inside the
 * transaction that writes it, so a move the table does not list, or any move
 * out of a terminal status, throws `illegal_transition` and writes nothing.
 */

export interface MoveExtras {
  /** state changes that belong to this move, written in the same transaction */
  state?: (s: RunState) => void;
  /** the run_stopped event's payload when this move stops the drive */
  stopped?: Record<string, unknown>;
}

export function illegalTransition(runId: string, from: RunStatus, to: RunStatus): MiniAgentError {
  const allowed = RUN_TRANSITIONS[from];
  const way = allowed.length === 0 ? `${from} is terminal` : `from ${from} a run may only become ${allowed.join(", ")}`;
  return new MiniAgentError("illegal_transition", `run ${runId} cannot move from ${from} to ${to}: ${way}`, { details: { run_id: runId, from, to } });
}

/** Moves the run to `to`, joining the caller's transaction; returns the status it left. */
export function moveRun(deps: RuntimeDeps, runId: string, to: RunStatus, reason: string, extras: MoveExtras = {}): RunStatus {
  return deps.ledger.tx(() => {
    const from = deps.ledger.getRun(runId).status;
    if (!canMoveRun(from, to)) throw illegalTransition(runId, from, to);
    if (extras.state) patchState(deps, runId, extras.state);
    deps.ledger.setRunStatus(runId, to, reason);
    if (extras.stopped) deps.trace.append(runId, { type: "run_stopped", payload: { status: to, ...extras.stopped } });
    return from;
  });
}

/** A new run's row: it starts `running`, as every run does. */
/** A person's decision (approve, reject, or one refused as stale or denied) clears the pending action and hands the run back to the loop. */
export function resumeAfterDecision(deps: RuntimeDeps, runId: string, reason: string): void {
  moveRun(deps, runId, "running", reason, { state: (s) => void (s.pending_action_id = null) });
}

export function insertNewRun(deps: RuntimeDeps, row: Omit<RunRow, "replay_cursor" | "status" | "reason">): void {
  deps.ledger.insertRun({ ...row, status: INITIAL_RUN_STATUS, reason: "started" });
}

/**
 * Leaves a run `interrupted` (resumable) with the phase to resume into: a
 * daemon shutdown, a restart after a crash, or a sandbox, model or recovery
 * that was unavailable. Never the user's cancel.
 */
export function markInterrupted(
  deps: RuntimeDeps,
  runId: string,
  phase: "running" | "verifying",
  reason: string,
  opts: { elapsedMs?: number; err?: unknown } = {},
): void {
  if (opts.err !== undefined) deps.logger.error({ runId, err: opts.err }, reason);
  moveRun(deps, runId, "interrupted", reason, {
    state: (s) => {
      s.interrupted_from = phase;
      if (opts.elapsedMs !== undefined) s.counters.elapsed_ms = opts.elapsedMs;
    },
    stopped: { interrupted_from: phase },
  });
}
