import { MiniAgentError } from "../errors.js";
import { bindingFor, checkApproval, signApproval } from "../policy/approvals.js";
import { decideCall } from "../policy/decide-call.js";
import { policyOf } from "../policy/effective.js";
import type { ActionRow } from "../store/ledger.js";
import type { ToolContext } from "../tools/context.js";
import type { RuntimeDeps } from "./deps.js";
import { resumeAfterDecision } from "./lifecycle.js";
import { executeApprovedWrite, recordNoWrite } from "./write-action.js";
import { approveCommand, rejectCommand } from "./command-approval.js";

/**
 * The pending action this decision is about. Another action id, or a run that
 * is not waiting, is refused and changes nothing (no approve-all, no approving
 * ahead).
 */
export function pendingAction(deps: RuntimeDeps, runId: string, actionId: string): ActionRow {
  const run = deps.ledger.getRun(runId);
  const row = deps.ledger.findAction(runId, actionId);
  if (!row) throw new MiniAgentError("approval_unknown", `run ${runId} has no action ${actionId}`, { details: { run_id: runId, action_id: actionId } });
  if (run.status !== "awaiting_approval" || run.state.pending_action_id !== actionId) {
    throw new MiniAgentError("approval_stale", `action ${actionId} is not the one awaiting approval in run ${runId} (it is ${row.status})`, {
      details: { run_id: runId, action_id: actionId, pending_action_id: run.state.pending_action_id },
    });
  }
  return row;
}

/** Who approved: a person over the API, or the run's policy by the rule that allowed it (`policy:<profile>:<rule>`). */
export type ApprovedBy = "user" | { policyRule: string };

/**
 * approve: check the binding (run, action id, argument digest, workspace digest
 * at proposal, record integrity) -> record approval -> intent -> write ->
 * written + receipt. A stale binding is told to the model (re-read) and
 * reported to the caller as approval_stale; the external edit is kept.
 * A write the policy approves takes this same path; only `by` differs. What
 * the task or the policy denies is refused here too (policy_denied or the
 * task's code), whoever approves: deny is final.
 */
export async function approveAction(
  deps: RuntimeDeps,
  runId: string,
  row: ActionRow,
  ctx: ToolContext,
  key: Uint8Array,
  by: ApprovedBy = "user",
  opts: { deferWrite?: boolean } = {},
): Promise<void> {
  // a command has its own binding and policy re-check (runtime/command-approval.ts); only a person approves one
  if (row.record.tool === "run_command") return approveCommand(deps, runId, row, ctx, key);
  const actionId = row.record.action_id;
  const denied = decideCall(row.record.tool, row.record.args, ctx.task, policyOf(ctx));
  if (denied.verdict === "deny") {
    throw new MiniAgentError(denied.code ?? "policy_denied", `approval refused: ${denied.reason}; nothing was written`, {
      details: { run_id: runId, action_id: actionId, rule: denied.rule ?? null },
    });
  }
  const byText = by === "user" ? "user" : by.policyRule;
  // a person's decision hands the waiting run back to the loop; the policy decides inside the loop's own step
  const handBack = (reason: string) => {
    if (by === "user") resumeAfterDecision(deps, runId, reason);
  };
  const prepared = deps.tools.verifyRecord(row.record.prepared);
  const staleBecause = (why: string): never => {
    deps.ledger.tx(() => {
      deps.trace.append(runId, {
        type: "approval_recorded",
        call_id: row.record.call_id,
        action_id: actionId,
        payload: { decision: "stale", reason: why, by: byText },
      });
      recordNoWrite(deps, runId, row, "approval_stale", `${why}; nothing was written; re-read the file and propose again`);
      handBack("approval went stale; the model was told to re-read");
    });
    throw new MiniAgentError("approval_stale", `approval refused: ${why}; nothing was written`, { details: { run_id: runId, action_id: actionId } });
  };
  if (!prepared.ok) return staleBecause(prepared.message);
  if (
    prepared.action.action_id !== actionId ||
    prepared.action.after_hash !== row.record.after_hash ||
    prepared.action.before_hash !== row.record.before_hash
  ) {
    return staleBecause("the action record in the ledger does not match its own content");
  }
  // the sealed record says who approved: null for a person, the rule for the policy
  const record = signApproval(bindingFor(runId, prepared.action), "approved", by === "user" ? null : by.policyRule, key);
  const check = checkApproval(record, { runId, action: prepared.action, workspaceDigest: await deps.tools.workspaceDigest(ctx) }, key);
  if (!check.ok) return staleBecause(check.message);

  // the approval is durable before the intent, and the intent before the write
  deps.ledger.tx(() => {
    deps.ledger.insertApproval(record);
    deps.ledger.setActionStatus(runId, actionId, "approved");
    deps.trace.append(runId, { type: "approval_recorded", call_id: row.record.call_id, action_id: actionId, payload: { decision: "approved", by: byText } });
    handBack(`approved ${actionId}`);
  });
  // an orchestrator with its own execution step carries the write out there, through the same ledger (runtime/steps.ts finishPending)
  if (opts.deferWrite) return;
  await executeApprovedWrite(deps, runId, deps.ledger.findAction(runId, actionId)!, ctx);
}

/** reject: persisted with its reason, sealed like an approval, and an observation for the model. */
export function rejectAction(deps: RuntimeDeps, runId: string, row: ActionRow, reason: string, key: Uint8Array): void {
  if (row.record.tool === "run_command") {
    rejectCommand(deps, runId, row, reason, key);
    return;
  }
  const prepared = deps.tools.verifyRecord(row.record.prepared);
  const binding = prepared.ok
    ? bindingFor(runId, prepared.action)
    : {
        schema_version: 1 as const,
        run_id: runId,
        action_id: row.record.action_id,
        args_digest: row.record.args_digest,
        workspace_digest: row.record.workspace_digest,
      };
  const record = signApproval(binding, "rejected", reason, key);
  deps.ledger.tx(() => {
    deps.ledger.insertApproval(record);
    deps.trace.append(runId, {
      type: "approval_recorded",
      call_id: row.record.call_id,
      action_id: row.record.action_id,
      payload: { decision: "rejected", reason, by: "user" },
    });
    recordNoWrite(deps, runId, row, "approval_rejected", `the user rejected this write: ${reason}`);
    resumeAfterDecision(deps, runId, `rejected ${row.record.action_id}`);
  });
}
