/**
 * Bad command-line input the daemon (or a program's own check) found: every
 * program answers these as a usage error (exit 64; client-lib/exit-codes.ts),
 * so they are listed once, here, and ERROR_CODES takes them from this list.
 */
export const USAGE_ERROR_CODES = [
  // ad-hoc tasks (adhoc/): bad input on the command line, refused before anything is prepared
  "invalid_workspace",
  "invalid_test_command",
  "test_command_not_found",
  "invalid_glob",
  "unknown_image_family",
  /** a workspace, fixture or case repo/ over the copy limits (bytes or files), refused before anything is copied */
  "workspace_too_large",
  /** `eval capture --out` names a folder no case may be written to (inside the daemon's state dir) */
  "capture_out_invalid",
  /** a --queue URL that is not redis://[:PASSWORD@]HOST:PORT/DB or rediss://... (the message never holds the password) */
  "queue_url_invalid",
  /** a --queue-password-file that cannot be used: unreadable, empty, or readable by group or others */
  "queue_password_file_invalid",
] as const;

/**
 * One error base for the whole daemon. Callers branch on `code`, never on
 * message text; `cause` keeps the underlying error for the log.
 */
export const ERROR_CODES = [
  // tool protocol
  "unknown_tool",
  "invalid_fields",
  "path_denied",
  "not_writable",
  "not_found",
  "stale_version",
  "non_unique_match",
  "no_match",
  "no_op",
  "too_large",
  "tests_failed",
  "unknown_preset",
  // policy
  "approval_required",
  "approval_stale",
  "approval_unknown",
  "approval_rejected",
  /** the policy (daemon file, profile or workspace tightening) denies this action: final, no approval can lift it */
  "policy_denied",
  /** the tool is not offered on this run's backend (run_command on trusted_local) */
  "tool_unavailable",
  /** the command's program is not in the run's sandbox image: refused before anything ran (it would exit 127) */
  "program_missing",
  // runtime
  "budget_exhausted",
  "cancelled",
  "model_error",
  "run_not_found",
  "run_not_resumable",
  /** cancel on a run that already ended (completed, failed): nothing is left to stop */
  "run_already_finished",
  "illegal_transition",
  "workspace_busy",
  "binding_mismatch",
  "uncertain_write",
  "schema_version_unsupported",
  "replay_untrusted",
  "invalid_task_spec",
  "invalid_replay",
  "invalid_request",
  "unauthorized",
  "payload_too_large",
  "policy_invalid",
  // sandbox and gate
  "runtime_unavailable",
  "image_missing",
  "image_digest_mismatch",
  "sandbox_error",
  "isolation_unverified",
  "backend_not_isolated",
  /** a preset needs a report file read back from a sandbox, and the backend (trusted_local) has none */
  "report_file_unsupported",
  /** a changed-path list was asked of a sandbox that cannot make one (fresh sandbox, trusted_local) */
  "changed_list_unsupported",
  // daemon: credentials and process
  "credentials_missing",
  "credentials_insecure",
  "daemon_already_running",
  "daemon_unreachable",
  // verifier
  "verification_error",
  "acceptance_protocol_error",
  // command-line input, refused before anything is prepared (the ad-hoc task's, the copy limits, the fleet's flags)
  ...USAGE_ERROR_CODES,
  /** a drafted task that can no longer run as it was shown: the folder it was drafted from changed, or the daemon no longer holds it */
  "draft_stale",
  // evals and the release gate (eval/): a case folder, a captured run, a report, gate rules
  /** a case folder that is not a valid case (missing file, unknown field in expect.json, bad task or replay) */
  "case_invalid",
  /** a case whose replay no longer fits its repo: a call's `version` is not the file it would patch */
  "case_replay_mismatch",
  /** `eval capture` refused: the run has no baseline or decisions to rebuild, or the output folder is not empty */
  "capture_refused",
  /** an eval report that is not a valid eval-report.json */
  "report_invalid",
  /** two reports of different suites or different case versions: the gate compares only like with like */
  "reports_incomparable",
  /** a gate rules file that is not valid */
  "gate_rules_invalid",
  // eval fleets (eval/src/fleet, worker/src): the queue URL, the case payload, the queue itself
  /** Redis did not answer (down, wrong host or port) */
  "queue_unreachable",
  /** Redis answered and refused the password (WRONGPASS), or wants one and none was given (NOAUTH) */
  "queue_auth_failed",
  /** a case folder packed for the queue is over the size cap */
  "case_payload_too_large",
  /** a job's case payload does not match its SHA-256 (or the case inside is not the case named) */
  "case_payload_mismatch",
  /** a path built from a case id or a case folder's name resolves (links followed) outside the work dir it belongs in */
  "path_escape",
  // anything else
  "internal",
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export class MiniAgentError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "MiniAgentError";
    this.code = code;
    this.details = options.details;
  }
}

export function isMiniAgentError(err: unknown, code?: ErrorCode): err is MiniAgentError {
  return err instanceof MiniAgentError && (code === undefined || err.code === code);
}
