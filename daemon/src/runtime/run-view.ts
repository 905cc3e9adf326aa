import type { Ledger } from "../store/ledger.js";
import type { PendingActionView, RunView } from "./service.js";

/** The API's view of a run, read from the ledger alone (so it is the same after a restart). */
export function runView(ledger: Ledger, runId: string, liveElapsedMs?: number): RunView {
  const run = ledger.getRun(runId);
  const s = run.state;
  let pending: PendingActionView | null = null;
  if (run.status === "awaiting_approval" && s.pending_action_id) {
    const a = ledger.findAction(runId, s.pending_action_id);
    if (a) {
      pending = { action_id: a.record.action_id, call_id: a.record.call_id, tool: a.record.tool, path: a.record.path, diff: a.record.diff, why: a.record.why };
    }
  }
  return {
    run_id: run.run_id,
    status: run.status,
    reason: run.reason,
    task: run.record.task.task,
    workspace: run.record.workspace,
    model: run.record.model,
    backend: run.record.backend,
    counters: { ...s.counters, elapsed_ms: liveElapsedMs ?? s.counters.elapsed_ms },
    last_tool: s.last_tool,
    tests: s.tests,
    pending_action: pending,
    verification: s.verification,
    last_seq: ledger.lastSeq(runId),
  };
}
