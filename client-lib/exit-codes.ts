import type { RunStatus } from "../daemon/src/contracts/run.js";
import { type ErrorCode, USAGE_ERROR_CODES } from "../daemon/src/errors.js";

/**
 * mini-agent-client exit codes: the one table (README "Exit codes" repeats it).
 *   0 completed (verified by the host Verifier) / command succeeded
 *   1 failed (reason printed), interrupted or uncertain (resume/inspect command printed), or a request the daemon refused
 *   2 isolation unverified, or the daemon / container engine unreachable
 *   3 awaiting approval (the approve/reject commands are printed)
 *   4 cancelled
 *   5 budget exhausted
 *  64 usage error
 * `mini-agent-client gate` answers with its own three outcomes (GATE_EXIT below):
 *   0 allow, 10 review, 11 block, 12 refused (an invalid report or rules file,
 *   or reports of different suites / case versions), 64 usage error
 */
export const EXIT = {
  ok: 0,
  failed: 1,
  unavailable: 2,
  awaitingApproval: 3,
  cancelled: 4,
  budgetExhausted: 5,
  usage: 64,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** The release gate's decisions as exit codes: distinct from a run's, so a CI step can tell review from block. */
export const GATE_EXIT = { allow: 0, review: 10, block: 11, refused: 12, usage: EXIT.usage } as const;

/** Exit code for a run that stopped (or is still moving: 0, the query itself succeeded). */
export function exitForStatus(status: RunStatus): ExitCode {
  switch (status) {
    case "completed":
    case "running":
    case "verifying":
      return EXIT.ok;
    case "awaiting_approval":
      return EXIT.awaitingApproval;
    case "cancelled":
      return EXIT.cancelled;
    case "budget_exhausted":
      return EXIT.budgetExhausted;
    case "failed":
    case "interrupted":
    case "uncertain":
      return EXIT.failed;
  }
}

const UNAVAILABLE: readonly ErrorCode[] = [
  "daemon_unreachable",
  "isolation_unverified",
  "backend_not_isolated",
  "runtime_unavailable",
  "image_missing",
  "image_digest_mismatch",
  "sandbox_error",
  "queue_unreachable",
  "queue_auth_failed",
];

export function exitForError(code: ErrorCode): ExitCode {
  if ((USAGE_ERROR_CODES as readonly ErrorCode[]).includes(code)) return EXIT.usage;
  if (UNAVAILABLE.includes(code)) return EXIT.unavailable;
  if (code === "budget_exhausted") return EXIT.budgetExhausted;
  if (code === "cancelled") return EXIT.cancelled;
  return EXIT.failed;
}
