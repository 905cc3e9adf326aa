import type { ErrorBody } from "../contracts/api.js";
import { isMiniAgentError, MiniAgentError, type ErrorCode } from "../errors.js";
import { redactDeep, redactText } from "../redact/index.js";

/**
 * HTTP status per error code, in one table. Codes the client branches on
 * (exit code 2 for isolation and engine problems) stay distinguishable here.
 */
const STATUS: Partial<Record<ErrorCode, number>> = {
  invalid_request: 400,
  invalid_fields: 400,
  invalid_task_spec: 400,
  invalid_replay: 400,
  replay_untrusted: 400,
  schema_version_unsupported: 400,
  invalid_workspace: 400,
  invalid_test_command: 400,
  test_command_not_found: 400,
  invalid_glob: 400,
  unknown_image_family: 400,
  workspace_too_large: 400,
  path_denied: 400,
  unknown_preset: 400,
  unknown_tool: 400,
  unauthorized: 401,
  not_found: 404,
  run_not_found: 404,
  approval_unknown: 404,
  workspace_busy: 409,
  draft_stale: 409,
  run_not_resumable: 409,
  run_already_finished: 409,
  illegal_transition: 409,
  approval_stale: 409,
  capture_refused: 409,
  capture_out_invalid: 400,
  approval_required: 409,
  approval_rejected: 409,
  binding_mismatch: 409,
  uncertain_write: 409,
  stale_version: 409,
  cancelled: 409,
  budget_exhausted: 409,
  payload_too_large: 413,
  isolation_unverified: 412,
  backend_not_isolated: 412,
  report_file_unsupported: 400,
  changed_list_unsupported: 400,
  policy_denied: 403,
  tool_unavailable: 400,
  policy_invalid: 400,
  credentials_missing: 412,
  credentials_insecure: 412,
  runtime_unavailable: 503,
  image_missing: 503,
  image_digest_mismatch: 503,
  sandbox_error: 503,
};

export function statusForCode(code: ErrorCode): number {
  return STATUS[code] ?? 500;
}

export interface HttpError {
  status: number;
  body: ErrorBody;
}

/**
 * Turns anything thrown into a response body. A MiniAgentError keeps its code
 * and message; anything else becomes `internal` with no detail, because an
 * unexpected message may hold a stack, a path or worse. The caller logs `err`.
 */
export function toHttpError(err: unknown): HttpError {
  if (isMiniAgentError(err)) {
    const body: ErrorBody = { error: { code: err.code, message: redactText(err.message) } };
    if (err.details && Object.keys(err.details).length > 0) {
      body.error.details = redactDeep(err.details) as Record<string, unknown>;
    }
    return { status: statusForCode(err.code), body };
  }
  return { status: 500, body: { error: { code: "internal", message: "internal error; see the daemon log for details" } } };
}

export function apiError(code: ErrorCode, message: string, details?: Record<string, unknown>): MiniAgentError {
  return new MiniAgentError(code, message, details ? { details } : {});
}
