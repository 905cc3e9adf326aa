import type { ActionStatus } from "../../store/records.js";

/**
 * The graph's node names and its routing state. The graph state holds only
 * where to go next and which action a pause is about; the ledger holds every
 * fact (decisions, calls, approvals, writes, receipts), so a checkpoint that
 * disagrees with the ledger can always be thrown away.
 */
export const NODES = ["enter", "decide", "propose", "approval", "execute", "observe", "verify"] as const;
export type NodeName = (typeof NODES)[number];
export type Route = NodeName | "__end__";

/** where a fresh drive starts: the model's turns, or straight into the Verifier (a run resumed while verifying) */
export type Entry = "model" | "verify";

/** what the approval node's interrupt() hands to the person's side, and what the drive resumes it with */
export interface ApprovalPause {
  action_id: string;
}
export type ApprovalOutcome = "approved" | "rejected" | "stale";
export interface ApprovalResume {
  action_id: string;
  decision: ApprovalOutcome;
}

/** what the ledger says a person's decision on an action was; null while nobody has decided */
export function decisionOf(status: ActionStatus): ApprovalOutcome | null {
  switch (status) {
    case "pending":
      return null;
    case "rejected":
      return "rejected";
    case "stale":
      return "stale";
    // approved and everything the write went through after it
    case "approved":
    case "intent":
    case "written":
    case "receipted":
    case "uncertain":
      return "approved";
  }
}

/**
 * Nodes per model turn at most (decide, propose, approval, execute, observe)
 * plus a plan's own observe: the recursion limit is set from the run's budgets
 * with this, so LangGraph's limit never ends a run the budgets would let go on
 * (the budgets stop it first, as in the manual loop).
 */
export const NODES_PER_TURN = 6;

export function recursionLimitFor(budgets: { model_turns: number; tool_calls: number }): number {
  return (budgets.model_turns + budgets.tool_calls + 2) * NODES_PER_TURN;
}
