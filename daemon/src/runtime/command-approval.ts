import { MiniAgentError } from "../errors.js";
import { checkCommandApproval, commandBindingFor, signApproval, type ApprovalBinding } from "../policy/approvals.js";
import { decideCall } from "../policy/decide-call.js";
import { policyOf } from "../policy/effective.js";
import type { ActionRow } from "../store/ledger.js";
import { verifyPreparedCommand } from "../tools/command-action.js";
import type { ToolContext } from "../tools/context.js";
import { errorResult } from "../tools/result.js";
import type { RuntimeDeps } from "./deps.js";
import { resumeAfterDecision } from "./lifecycle.js";
import { observe } from "./observe.js";

/**
 * A user's decision on a pending run_command. Approve re-checks the policy (a
 * deny is final, even over the API) and the binding (run, action, arguments,
 * workspace digest: a changed workspace makes it stale), then records the
 * sealed approval and hands the run back to the loop, which finds the call
 * unanswered and runs it in the sandbox (runtime/command-step.ts). Nothing of
 * the write machinery (intent, receipt) is involved: a command writes nothing.
 */
export async function approveCommand(deps: RuntimeDeps, runId: string, row: ActionRow, ctx: ToolContext, key: Uint8Array): Promise<void> {
  const rec = row.record;
  const refuse = (code: "approval_stale" | "policy_denied", decision: "stale" | "denied", why: string): never => {
    deps.ledger.tx(() => {
      deps.trace.append(runId, { type: "approval_recorded", call_id: rec.call_id, action_id: rec.action_id, payload: { decision, reason: why } });
      deps.ledger.setActionStatus(runId, rec.action_id, code === "policy_denied" ? "rejected" : "stale");
      observe(deps, { runId }, "run_command", errorResult(rec.call_id, code, `${why}; the command did not run`));
      resumeAfterDecision(deps, runId, `command not run (${code})`);
    });
    throw new MiniAgentError(code, `approval refused: ${why}; the command did not run`, { details: { run_id: runId, action_id: rec.action_id } });
  };
  const v = verifyPreparedCommand(rec.prepared);
  if (!v.ok) return refuse("approval_stale", "stale", v.message);
  const policy = decideCall("run_command", v.command.arguments, ctx.task, policyOf(ctx));
  if (policy.verdict === "deny") return refuse("policy_denied", "denied", `denied by ${policy.rule ?? "task"}`);
  const record = signApproval(commandBindingFor(runId, v.command), "approved", null, key);
  const check = checkCommandApproval(record, { runId, command: v.command, workspaceDigest: await deps.tools.workspaceDigest(ctx) }, key);
  if (!check.ok) return refuse("approval_stale", "stale", check.message);
  deps.ledger.tx(() => {
    deps.ledger.insertApproval(record);
    deps.ledger.setActionStatus(runId, rec.action_id, "approved");
    deps.trace.append(runId, {
      type: "approval_recorded",
      call_id: rec.call_id,
      action_id: rec.action_id,
      payload: { decision: "approved", by: "user", tool: "run_command", argv: v.command.arguments.argv, rule: v.command.rule },
    });
    resumeAfterDecision(deps, runId, `approved ${rec.action_id}`);
  });
}

/** reject: sealed like an approval, persisted with its reason, and an observation for the model. */
export function rejectCommand(deps: RuntimeDeps, runId: string, row: ActionRow, reason: string, key: Uint8Array): void {
  const rec = row.record;
  const v = verifyPreparedCommand(rec.prepared);
  const binding: ApprovalBinding = v.ok
    ? commandBindingFor(runId, v.command)
    : { schema_version: 1, run_id: runId, action_id: rec.action_id, args_digest: rec.args_digest, workspace_digest: rec.workspace_digest };
  const record = signApproval(binding, "rejected", reason, key);
  deps.ledger.tx(() => {
    deps.ledger.insertApproval(record);
    deps.trace.append(runId, { type: "approval_recorded", call_id: rec.call_id, action_id: rec.action_id, payload: { decision: "rejected", reason } });
    deps.ledger.setActionStatus(runId, rec.action_id, "rejected");
    observe(deps, { runId }, "run_command", errorResult(rec.call_id, "approval_rejected", `the user rejected this command: ${reason}`));
    resumeAfterDecision(deps, runId, `rejected ${rec.action_id}`);
  });
}
