import type { ExhaustedBudget, PendingActionView, RunView } from "../contracts/run-view.js";
import { type Budgets, taskImageFamily } from "../contracts/task-spec.js";
import type { Counters, StopFacts } from "../store/records.js";
import type { Ledger } from "../store/ledger.js";
import { PreparedCommand } from "../contracts/tool-call.js";

/** The API's view of a run, read from the ledger alone (so it is the same after a restart). */
export function runView(ledger: Ledger, runId: string, liveElapsedMs?: number): RunView {
  const run = ledger.getRun(runId);
  const s = run.state;
  let pending: PendingActionView | null = null;
  if (run.status === "awaiting_approval" && s.pending_action_id) {
    const a = ledger.findAction(runId, s.pending_action_id);
    if (a) {
      pending = {
        action_id: a.record.action_id,
        call_id: a.record.call_id,
        tool: a.record.tool,
        path: a.record.path,
        diff: a.record.diff,
        why: a.record.why,
        ...(a.record.rule !== undefined && { rule: a.record.rule }),
      };
      const command = a.record.tool === "run_command" ? PreparedCommand.safeParse(a.record.prepared) : null;
      if (command?.success) {
        pending.command = { argv: command.data.arguments.argv, rule: command.data.rule };
        pending.rule ??= command.data.rule;
      }
    }
  }
  const counters = { ...s.counters, elapsed_ms: liveElapsedMs ?? s.counters.elapsed_ms };
  return {
    run_id: run.run_id,
    status: run.status,
    reason: run.reason,
    task: run.record.task.task,
    workspace: run.record.workspace,
    model: run.record.model,
    backend: run.record.backend,
    image_family: taskImageFamily(run.record.task),
    counters,
    last_tool: s.last_tool,
    tests: s.tests,
    pending_action: pending,
    verification: s.verification,
    exhausted_budget: run.status === "budget_exhausted" ? exhaustedBudget(s.stop, counters, run.record.budgets) : null,
    last_seq: ledger.lastSeq(runId),
    ...(run.record.adhoc && { task_spec: run.record.task }),
  };
}

/** Which budget stopped the run, so the user learns which one to raise and by how much. */
export function exhaustedBudget(stop: StopFacts, c: Counters, budgets: Budgets): ExhaustedBudget | null {
  // a passed deadline without a named budget is the total time (budgets.primaryStop says the same)
  const name = stop.exhausted ?? (stop.timed_out ? "total_seconds" : null);
  switch (name) {
    case null:
      return null;
    case "model_turns":
      return { name, used: c.model_turns, limit: budgets.model_turns };
    case "tool_calls":
      return { name, used: c.tool_calls, limit: budgets.tool_calls };
    case "total_seconds":
      return { name, used: Math.round(c.elapsed_ms / 100) / 10, limit: budgets.total_seconds };
    case "tokens":
      return { name, used: c.prompt_tokens + c.completion_tokens, limit: budgets.tokens ?? 0 };
  }
}
