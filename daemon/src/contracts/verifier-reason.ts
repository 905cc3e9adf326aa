import * as z from "zod/mini";

/**
 * Why the host Verifier did not accept a run: the one list. The Verifier
 * (verifier/verify.ts) emits only these, the run view and the trace carry
 * them, and the client words each (client-lib/verdict-why.ts switches over
 * the kind with a `never` check), so a reason added here without words fails
 * the type check instead of reaching a user as a bare code.
 *
 * `verification_error` is the one kind with a detail: the Verifier could not
 * reach a verdict (engine gone, baseline unreadable, workspace changed while it
 * ran), written `verification_error:<code>` on the wire.
 */
export const VERIFIER_REASON_KINDS = [
  "no_changes",
  "protected_path_changed",
  "secret_in_diff",
  "false_green",
  "verification_failed",
  "verify_command_failed",
  "acceptance_protocol_error",
  "verification_error",
] as const;
export const VerifierReasonKind = z.enum(VERIFIER_REASON_KINDS);
export type VerifierReasonKind = z.infer<typeof VerifierReasonKind>;

const VERDICT_REASONS = VERIFIER_REASON_KINDS.filter((k): k is Exclude<VerifierReasonKind, "verification_error"> => k !== "verification_error");

export const VerifierReason = z.union([z.enum(VERDICT_REASONS), z.templateLiteral(["verification_error:", z.string().check(z.minLength(1))])]);
export type VerifierReason = z.infer<typeof VerifierReason>;

/** `verification_error:baseline_missing` → "verification_error"; every other reason is its own kind */
export function reasonKind(reason: VerifierReason): VerifierReasonKind {
  return reason.startsWith("verification_error:") ? "verification_error" : (reason as VerifierReasonKind);
}

/** the detail of a verification_error (the error code after the colon), else null */
export function verificationErrorDetail(reason: VerifierReason): string | null {
  return reason.startsWith("verification_error:") ? reason.slice("verification_error:".length) : null;
}

/** the reason the Verifier writes when it could not reach a verdict */
export function verificationError(code: string): VerifierReason {
  return `verification_error:${code}`;
}
