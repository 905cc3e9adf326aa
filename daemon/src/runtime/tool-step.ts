import type { ToolCall, ToolResult } from "../contracts/tool-call.js";
import { errorResult } from "../tools/result.js";
import type { ValidatedToolCall } from "../tools/validate.js";
import type { ActiveRun } from "./active-run.js";
import { nextCallTimeoutMs } from "./budgets.js";
import { patchState, type RuntimeDeps } from "./deps.js";
import { sandboxIncludeReporter } from "./sandbox-include.js";
import { moveRun } from "./lifecycle.js";
import { commandFigures, commandGate } from "./command-step.js";

export type ToolStepOutcome = "continue" | "awaiting_approval" | "out_of_time";

/**
 * One proposed call: validate -> classify -> deny (observation) | ask (persist
 * the prepared action, then hand control to the user) | allow (execute, observe).
 * Nothing leaves the host before its state is in the ledger.
 */
export async function toolStep(
  deps: RuntimeDeps,
  active: ActiveRun,
  call: ToolCall,
  why: string | null,
  opts: { countCall?: boolean } = {},
): Promise<ToolStepOutcome> {
  if (opts.countCall !== false) deps.ledger.tx(() => patchState(deps, active.runId, (s) => void (s.counters.tool_calls += 1)));
  const checked = deps.tools.validate(call);
  if (!checked.ok) return observe(deps, active, call.name, checked.result);

  const verdict = deps.tools.classify(checked, active.ctx);
  if (verdict.verdict === "deny") {
    return observe(deps, active, checked.name, errorResult(call.call_id, verdict.code ?? "path_denied", verdict.reason));
  }
  if (verdict.verdict === "ask") return proposeWrite(deps, active, checked, why);
  if (checked.name === "run_command") {
    // the command policy decides before anything runs: a refusal never opens a sandbox (runtime/command-step.ts)
    const gate = await commandGate(deps, active, checked, why);
    if (gate.kind === "awaiting_approval") return "awaiting_approval";
    if (gate.kind === "refused") return observe(deps, active, checked.name, gate.result, gate.trace);
    return runAllowed(deps, active, checked, (r) => ({ ...gate.trace, ...commandFigures(r) }));
  }
  return runAllowed(deps, active, checked);
}

/** Executes an allowed, non-writing call and observes it; `traceExtra` goes into its tool_observed event. */
export async function runAllowed(
  deps: RuntimeDeps,
  active: ActiveRun,
  checked: ValidatedToolCall,
  traceExtra?: (r: ToolResult) => Record<string, unknown>,
): Promise<ToolStepOutcome> {
  const timeoutMs = nextCallTimeoutMs(deps.ledger.getRun(active.runId).record.budgets, active.elapsedMs());
  if (timeoutMs === null) return "out_of_time";
  const result = await deps.tools.run(checked, {
    ...active.ctx,
    runId: active.runId,
    signal: active.signal,
    timeoutMs,
    executor: active.executor,
    session: () => active.warmSession(),
    onSandboxInclude: sandboxIncludeReporter(deps, active.runId, active.ctx.sandboxInclude ?? []),
  });
  // cut short by a daemon shutdown: left unanswered so the resumed run runs it again
  if (active.abortReason === "shutdown") return "continue";
  return observe(deps, active, checked.name, result, traceExtra?.(result));
}

/** Prepares the write and persists it with approval_requested BEFORE anyone is asked. */
async function proposeWrite(deps: RuntimeDeps, active: ActiveRun, call: ValidatedToolCall, why: string | null): Promise<ToolStepOutcome> {
  const prepared = await deps.tools.prepare(call, active.ctx, active.runId);
  if (!prepared.ok) return observe(deps, active, call.name, prepared.result);
  const a = prepared.action;
  deps.ledger.tx(() => {
    if (!deps.ledger.findAction(active.runId, a.action_id)) {
      deps.ledger.insertAction({
        schema_version: 1,
        run_id: active.runId,
        action_id: a.action_id,
        call_id: a.call_id,
        tool: a.tool,
        path: a.path,
        args: a.arguments,
        args_digest: a.args_digest,
        workspace_digest: a.manifest_digest,
        before_hash: a.before_hash,
        after_hash: a.after_hash,
        manifest_digest: a.manifest_digest,
        diff: a.diff,
        why,
        prepared: a,
      });
    }
    moveRun(deps, active.runId, "awaiting_approval", `approval needed for ${a.action_id} (${a.path})`, {
      state: (s) => {
        s.pending_action_id = a.action_id;
        s.last_tool = call.name;
        s.counters.elapsed_ms = active.elapsedMs();
      },
    });
    deps.trace.append(active.runId, {
      type: "approval_requested",
      call_id: a.call_id,
      action_id: a.action_id,
      payload: { tool: a.tool, path: a.path, before_hash: a.before_hash, after_hash: a.after_hash, workspace_digest: a.manifest_digest },
    });
  });
  await active.closeSession();
  return "awaiting_approval";
}

/**
 * A tool result becomes a message for the model and a tool_observed event,
 * together. The ledger redacts the message as it stores it (redact/), and the
 * model's view is rebuilt from the ledger: an observation reaches the model
 * only without secret shapes, whatever the tool read.
 */
export function observe(
  deps: RuntimeDeps,
  active: { runId: string; elapsedMs(): number } | { runId: string },
  tool: string,
  result: ToolResult,
  traceExtra: Record<string, unknown> = {},
): "continue" {
  deps.ledger.tx(() => {
    deps.ledger.appendMessage(active.runId, { schema_version: 1, role: "tool", result });
    patchState(deps, active.runId, (s) => {
      s.last_tool = tool;
      if ("elapsedMs" in active) s.counters.elapsed_ms = active.elapsedMs();
      const tests = testFigures(tool, result);
      if (tests) s.tests = tests;
    });
    deps.trace.append(active.runId, {
      type: "tool_observed",
      call_id: result.call_id,
      payload: {
        tool,
        ok: result.ok,
        error: result.error?.code ?? null,
        truncated: result.truncated,
        ...traceFigures(testFigures(tool, result)),
        ...traceExtra,
      },
    });
  });
  return "continue";
}

type TestFigures = { discovered: number; passed: number; failed: number; exit_code_only?: boolean; green?: boolean };

/** What a run_tests result says for the run status; an exit-code-only run has no count, only pass or fail. */
function testFigures(tool: string, r: ToolResult): TestFigures | null {
  if (tool !== "run_tests" || r.data === null || typeof r.data !== "object") return null;
  const d = r.data as Record<string, unknown>;
  if (d.exit_code_only === true) return { discovered: 0, passed: 0, failed: 0, exit_code_only: true, green: d.green === true };
  const n = (k: string) => (typeof d[k] === "number" ? (d[k] as number) : 0);
  return { discovered: n("discovered"), passed: n("passed"), failed: n("failed") };
}

/** The trace's figures: an exit-code-only run shows no counts there (it must never read as "0/0"). */
function traceFigures(f: TestFigures | null): Record<string, unknown> {
  if (f === null) return {};
  return f.exit_code_only ? { exit_code_only: true, green: f.green } : f;
}
