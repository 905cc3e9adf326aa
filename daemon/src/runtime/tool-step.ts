import type { PreparedAction, ToolCall, ToolResult } from "../contracts/tool-call.js";
import { isMiniAgentError } from "../errors.js";
import type { ActionRecord } from "../store/records.js";
import { errorResult } from "../tools/result.js";
import type { ValidatedToolCall } from "../tools/validate.js";
import type { ActiveRun } from "./active-run.js";
import { approveAction } from "./approval-flow.js";
import { nextCallTimeoutMs } from "./budgets.js";
import { patchState, type RuntimeDeps } from "./deps.js";
import { sandboxIncludeReporter } from "./sandbox-include.js";
import { moveRun } from "./lifecycle.js";
import { commandFigures, commandGate } from "./command-step.js";
import { observe } from "./observe.js";

// observations have their own home (observe.ts) so the approval path can use them without a cycle
export { observe };

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

  if (checked.name === "run_command") {
    // first whether a sandbox exists at all, then the policy (the same decideCall), before anything runs:
    // a refusal never opens a sandbox, and every call's argv, decision and rule are traced (runtime/command-step.ts)
    const gate = await commandGate(deps, active, checked, why);
    if (gate.kind === "awaiting_approval") return "awaiting_approval";
    if (gate.kind === "refused") return observe(deps, active, checked.name, gate.result, gate.trace);
    return runAllowed(deps, active, checked, (r) => ({ ...gate.trace, ...commandFigures(r) }));
  }
  const verdict = deps.tools.classify(checked, active.ctx);
  if (verdict.verdict === "deny") {
    return observe(deps, active, checked.name, errorResult(call.call_id, verdict.code ?? "path_denied", verdict.reason));
  }
  if (verdict.verdict === "ask") return proposeWrite(deps, active, checked, why, { rule: verdict.rule ?? "task", byPolicy: false });
  // a write the policy allows (auto_edit) is still proposed, bound and recorded: approved by the policy, not run blind
  if (checked.name === "apply_patch") return proposeWrite(deps, active, checked, why, { rule: verdict.rule ?? "task", byPolicy: true });
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
    baselineTests: deps.baselineTests,
    onSandboxInclude: sandboxIncludeReporter(deps, active.runId, active.ctx.sandboxInclude ?? []),
  });
  // cut short by a daemon shutdown: left unanswered so the resumed run runs it again
  if (active.abortReason === "shutdown") return "continue";
  return observe(deps, active, checked.name, result, traceExtra?.(result));
}

/**
 * Prepares the write and persists it BEFORE anyone decides: with
 * approval_requested (naming the rule that asked) when a person must answer,
 * or straight into the approval path when the policy approves it.
 */
async function proposeWrite(
  deps: RuntimeDeps,
  active: ActiveRun,
  call: ValidatedToolCall,
  why: string | null,
  asked: { rule: string; byPolicy: boolean },
): Promise<ToolStepOutcome> {
  const prepared = await deps.tools.prepare(call, active.ctx, active.runId);
  if (!prepared.ok) return observe(deps, active, call.name, prepared.result);
  const a = prepared.action;
  if (asked.byPolicy) return approveByPolicy(deps, active, a, why, asked.rule);
  deps.ledger.tx(() => {
    if (!deps.ledger.findAction(active.runId, a.action_id)) {
      deps.ledger.insertAction(actionRecord(active.runId, a, why, asked.rule));
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
      payload: {
        tool: a.tool,
        path: a.path,
        before_hash: a.before_hash,
        after_hash: a.after_hash,
        workspace_digest: a.manifest_digest,
        rule: asked.rule,
      },
    });
  });
  await active.closeSession();
  return "awaiting_approval";
}

/**
 * A write the policy approves: persisted as a pending action, then the same
 * approveAction a person's approval runs (binding, sealed record, intent ->
 * write -> receipt), recorded `by` the rule. The run never stops for it. An
 * action already decided (a resumed run re-proposing its last call) is left
 * to recovery, which finishes approved writes by the three-state check.
 */
async function approveByPolicy(deps: RuntimeDeps, active: ActiveRun, a: PreparedAction, why: string | null, rule: string): Promise<ToolStepOutcome> {
  const existing = deps.ledger.findAction(active.runId, a.action_id);
  if (existing && existing.status !== "pending") return "continue";
  if (!existing) {
    deps.ledger.tx(() => deps.ledger.insertAction(actionRecord(active.runId, a, why, rule)));
  }
  try {
    await approveAction(deps, active.runId, deps.ledger.findAction(active.runId, a.action_id)!, active.ctx, await deps.approvalKey(), { policyRule: rule });
  } catch (err) {
    // stale: the model was told to re-read (approval-flow.ts) and the run goes on
    if (!isMiniAgentError(err, "approval_stale")) throw err;
  }
  return "continue";
}

/** The ledger's row for a prepared write, with the plan that led to it and the rule that decided it. */
function actionRecord(runId: string, a: PreparedAction, why: string | null, rule: string): ActionRecord {
  return {
    schema_version: 1,
    run_id: runId,
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
    rule,
    prepared: a,
  };
}
