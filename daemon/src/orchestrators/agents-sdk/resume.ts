import { checkApproval } from "../../policy/approvals.js";
import type { ActionRow } from "../../store/ledger.js";
import { recordNoWrite } from "../../runtime/write-action.js";
import { actionOf, answerOf, lastCallId, ledgerCallId } from "./ledger-facts.js";
import type { DriveScope } from "./scope.js";
import type { Agent, RunState, RunToolApprovalItem } from "./sdk.js";

/** What the ledger says a person decided for a paused call, as the SDK's approval needs it. */
export type LedgerVerdict = { kind: "approve" } | { kind: "reject"; message: string } | { kind: "disagree"; why: string };

/**
 * Applies the LEDGER's decisions to a saved RunState's interruptions, before
 * the Runner resumes in this process: approve what the ledger approved
 * (after re-checking the approval's binding and the workspace digest), reject
 * what it rejected or what went stale. Returns why the saved state cannot be
 * used when it disagrees with the ledger (the run has moved on, or no decision
 * is recorded); the caller then starts a fresh Runner from the ledger.
 */
export async function applyLedgerDecisions(scope: DriveScope, state: RunState<unknown, Agent>): Promise<string | null> {
  const interruptions = state.getInterruptions();
  if (interruptions.length !== 1) return `the saved state has ${interruptions.length} pending approvals, the ledger one at most`;
  const item = interruptions[0] as RunToolApprovalItem;
  const callId = item.rawItem.type === "function_call" ? ledgerCallId(item.rawItem.callId) : null;
  if (!callId) return "the saved state pauses on something other than a function call";
  const verdict = await verdictFor(scope, callId);
  if (verdict.kind === "disagree") return verdict.why;
  if (verdict.kind === "approve") state.approve(item);
  else state.reject(item, { message: verdict.message });
  return null;
}

export async function verdictFor(scope: DriveScope, callId: string): Promise<LedgerVerdict> {
  const { deps, active } = scope;
  if (lastCallId(deps, active.runId) !== callId) return { kind: "disagree", why: `the ledger has moved on from call ${callId}` };
  const row = actionOf(deps, active.runId, callId);
  if (!row) return { kind: "disagree", why: `the ledger has no action for call ${callId}` };
  switch (row.status) {
    case "pending":
    case "uncertain":
      return { kind: "disagree", why: `action ${row.record.action_id} is ${row.status}` };
    case "rejected":
    case "stale":
      return { kind: "reject", message: answerOf(deps, active.runId, callId)?.error?.message ?? `action ${row.record.action_id} is ${row.status}` };
    case "written":
    case "receipted":
      return { kind: "approve" };
    case "approved":
    case "intent":
      return (await approvalHolds(scope, row))
        ? { kind: "approve" }
        : { kind: "reject", message: answerOf(deps, active.runId, callId)?.error?.message ?? "stale" };
  }
}

/**
 * The re-check before an approved write is resumed in a new process: the
 * sealed approval must still match the action (run, action id, argument
 * digest) and the workspace must still be what it was bound to. A write that
 * already happened (the file is at the "after" version) is left to
 * finishPending, which records only its receipt; a file at neither version is
 * left to it too, and ends the run `uncertain`. A failed check goes stale
 * through the same path as in the manual loop: recorded, and the model is
 * told to re-read. Commands re-check their own approval when they run
 * (runtime/command-step.ts).
 */
async function approvalHolds(scope: DriveScope, row: ActionRow): Promise<boolean> {
  const { deps, active } = scope;
  const rec = row.record;
  if (rec.tool === "run_command") return true;
  if ((await deps.tools.fileVersion(rec.path, active.ctx)) !== rec.before_hash) return true;
  const check = checkApproval(
    deps.ledger.findApproval(active.runId, rec.action_id),
    { runId: active.runId, action: rec.prepared, workspaceDigest: await deps.tools.workspaceDigest(active.ctx) },
    await deps.approvalKey(),
  );
  if (check.ok) return true;
  deps.ledger.tx(() => {
    deps.trace.append(active.runId, {
      type: "approval_recorded",
      call_id: rec.call_id,
      action_id: rec.action_id,
      payload: { decision: "stale", reason: check.message, by: "user" },
    });
    recordNoWrite(deps, active.runId, row, "approval_stale", `${check.message}; nothing was written; re-read the file and propose again`);
  });
  return false;
}
