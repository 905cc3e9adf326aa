/** Workspace checks without a model: tests in a fresh proven sandbox, a baseline, the host Verifier's verdict (issue 28). */
export { sandboxTests } from "./run-tests.js";
export { verifyBegin, verifyWorkspace } from "./verify.js";
export { sandboxExec } from "./exec.js";
export type { ChecksDeps } from "./ports.js";

import type { ChecksService } from "../api/ports.js";
import type { CheckApprovalBody } from "../contracts/api.js";
import type { CheckApproval } from "./approvals.js";
import type { ChecksDeps } from "./ports.js";
import { sandboxTests } from "./run-tests.js";
import { sandboxExec } from "./exec.js";
import { verifyBegin, verifyWorkspace } from "./verify.js";

export function createChecksService(deps: ChecksDeps): ChecksService {
  return {
    tests: (req) => sandboxTests(req, deps),
    exec: (req) => sandboxExec(req, deps),
    begin: (req) => verifyBegin(req, deps),
    verify: (req) => verifyWorkspace(req, deps),
    approval: (id) => approvalBody(deps.approvals.get(id)),
    decide: (id, req) => approvalBody(deps.approvals.decide(id, req.decision, req.reason)),
  };
}

function approvalBody(a: CheckApproval): CheckApprovalBody {
  return { kind: "check_approval", id: a.id, workspace: a.workspace, argv: a.argv, state: a.state, reason: a.reason };
}
