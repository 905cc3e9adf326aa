/** Policy: classify() decides allow/ask/deny; approvals bind a decision to one action in one workspace state. */
export { classify, type PolicyDecision, type Verdict } from "./classify.js";
export { ApprovalBinding, ApprovalRecord, bindingFor, signApproval, checkApproval, type ApprovalCheck } from "./approvals.js";
export { loadOrCreateApprovalKey } from "./approval-key.js";
