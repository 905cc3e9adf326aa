import { DEFAULT_ORCHESTRATOR, TERMINAL_STATUSES } from "../contracts/run.js";
import fs from "node:fs";
import { CHANGED_FILES_SHOWN, type ExhaustedBudget, type PendingActionView, type RunView } from "../contracts/run-view.js";
import { type Budgets, taskImageFamily } from "../contracts/task-spec.js";
import type { Counters, StopFacts } from "../store/records.js";
import type { Ledger } from "../store/ledger.js";
import { PreparedCommand } from "../contracts/tool-call.js";
import { traceFilePath } from "../trace/trace-file.js";
import { TEST_OUTPUT_KINDS, testOutputPath } from "../tools/output-artifact.js";
import { sweBenchStatus } from "../verifier/swebench-status.js";

/** The API's view of a run, read from the ledger alone (so it is the same after a restart). */
export function runView(ledger: Ledger, runId: string, liveElapsedMs?: number, stateDir?: string): RunView {
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
  const changed = changedFiles(ledger, runId);
  return {
    run_id: run.run_id,
    status: run.status,
    reason: run.reason,
    task: run.record.task.task,
    workspace: run.record.workspace,
    model: run.record.model,
    backend: run.record.backend,
    ...(run.record.runtime !== undefined && { runtime: run.record.runtime }),
    image_family: taskImageFamily(run.record.task),
    orchestrator: run.record.orchestrator ?? DEFAULT_ORCHESTRATOR,
    counters,
    last_tool: s.last_tool,
    tests: s.tests,
    pending_action: pending,
    verification: s.verification,
    exhausted_budget: run.status === "budget_exhausted" ? exhaustedBudget(s.stop, counters, run.record.budgets) : null,
    last_seq: ledger.lastSeq(runId),
    ...(run.record.adhoc && { task_spec: run.record.task }),
    changed_files: changed.files,
    ...traceFileOf(stateDir, runId),
    ...testOutputOf(run.record.control_dir),
    ...(TERMINAL_STATUSES.includes(run.status) && {
      swebench: sweBenchStatus({
        task: run.record.task,
        evidence: s.verification,
        // the Verifier's count is against the baseline on disk (a write undone later is no change); before it ran, the writes'
        changed: (s.verification?.changed_path_count ?? changed.files.count) > 0,
        writesApplied: changed.allApplied,
      }),
    }),
  };
}

/**
 * The paths the run changed vs its baseline: the daemon is the only writer of
 * a run's workspace (code runs on a copy in a sandbox), so these are the paths
 * of its writes that reached the disk. Read from the ledger, like the rest of
 * the view: cheap on every poll, the same after a restart.
 */
function changedFiles(ledger: Ledger, runId: string): { files: NonNullable<RunView["changed_files"]>; allApplied: boolean } {
  const written = new Set<string>();
  // SWE-bench's patch_successfully_applied: a write refused, stale, uncertain or left waiting means the change is not whole
  let allApplied = true;
  for (const a of ledger.listActions(runId)) {
    if (a.record.tool === "run_command" || a.record.path === "") continue;
    if (a.status === "written" || a.status === "receipted") written.add(a.record.path);
    else allApplied = false;
  }
  const paths = [...written].sort();
  return { files: { paths: paths.slice(0, CHANGED_FILES_SHOWN), count: paths.length }, allApplied };
}

function testOutputOf(controlDir: string): { test_output?: { run_tests?: string; verifier?: string } } {
  const found = TEST_OUTPUT_KINDS.flatMap((k) => (fs.existsSync(testOutputPath(controlDir, k)) ? [[k, testOutputPath(controlDir, k)] as const] : []));
  return found.length > 0 ? { test_output: Object.fromEntries(found) } : {};
}

function traceFileOf(stateDir: string | undefined, runId: string): { trace_file?: string } {
  const file = stateDir === undefined ? null : traceFilePath(stateDir, runId);
  return file !== null && fs.existsSync(file) ? { trace_file: file } : {};
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
