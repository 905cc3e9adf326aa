import { createHmac, timingSafeEqual } from "node:crypto";
import { z } from "zod";
import { Id, SchemaVersion, Sha256Hex, describeZodError } from "../contracts/common.js";
import type { PreparedAction, PreparedCommand } from "../contracts/tool-call.js";
import { canonicalJson } from "../workspace/hash.js";
import { verifyPreparedAction } from "../tools/apply-patch.js";
import { verifyPreparedCommand } from "../tools/command-action.js";

/**
 * What an approval is FOR: one run, one action, these exact arguments, this
 * workspace state. Approving one binding never approves another (no approve-all).
 */
export const ApprovalBinding = z.strictObject({
  schema_version: SchemaVersion,
  run_id: Id,
  action_id: Id,
  args_digest: Sha256Hex,
  workspace_digest: Sha256Hex,
});
export type ApprovalBinding = z.infer<typeof ApprovalBinding>;

/** The persisted decision; `mac` is an HMAC-SHA256 over binding+decision+reason with a daemon-held key. */
export const ApprovalRecord = z.strictObject({
  schema_version: SchemaVersion,
  binding: ApprovalBinding,
  decision: z.enum(["approved", "rejected"]),
  reason: z.string().max(2048).nullable(),
  mac: Sha256Hex,
});
export type ApprovalRecord = z.infer<typeof ApprovalRecord>;

export type ApprovalCheck =
  | { ok: true; record: ApprovalRecord }
  | { ok: false; code: "approval_stale" | "approval_unknown" | "approval_rejected"; message: string };

export function bindingFor(runId: string, action: PreparedAction): ApprovalBinding {
  return {
    schema_version: 1,
    run_id: runId,
    action_id: action.action_id,
    args_digest: action.args_digest,
    workspace_digest: action.manifest_digest,
  };
}

function macOf(record: Omit<ApprovalRecord, "mac">, key: Uint8Array): string {
  return createHmac("sha256", key).update(canonicalJson(record)).digest("hex");
}

/** Seals a decision for persistence; the key never leaves the daemon. */
export function signApproval(binding: ApprovalBinding, decision: "approved" | "rejected", reason: string | null, key: Uint8Array): ApprovalRecord {
  if (key.length < 32) throw new RangeError("approval key must be at least 32 bytes");
  const body = { schema_version: 1 as const, binding, decision, reason };
  return { ...body, mac: macOf(body, key) };
}

/**
 * Whether `stored` lets THIS action be written now. Every element is re-derived
 * rather than trusted: the record's MAC, the action's own id and digests (from
 * its content), the run, and the live workspace digest. Any difference is
 * approval_stale: the external edit is kept and the agent must re-read.
 */
export function checkApproval(stored: unknown, current: { runId: string; action: unknown; workspaceDigest: string }, key: Uint8Array): ApprovalCheck {
  const sealed = openSealed(stored, key);
  if (!sealed.ok) return sealed;
  const v = verifyPreparedAction(current.action);
  if (!v.ok) return { ok: false, code: "approval_stale", message: v.message };
  if (v.action.run_id !== current.runId) return { ok: false, code: "approval_stale", message: "the action belongs to another run" };
  return matchBinding(sealed.record, bindingFor(current.runId, v.action), current);
}

/** A command's binding: the same four facts as a write's, from its own record. */
export function commandBindingFor(runId: string, command: PreparedCommand): ApprovalBinding {
  return { schema_version: 1, run_id: runId, action_id: command.action_id, args_digest: command.args_digest, workspace_digest: command.workspace_digest };
}

/**
 * checkApproval for a run_command action: the same seal, the same binding
 * checks (run, action id, argument digest, workspace digest now), with the
 * command's own record re-derived instead of a write's.
 */
export function checkCommandApproval(stored: unknown, current: { runId: string; command: unknown; workspaceDigest: string }, key: Uint8Array): ApprovalCheck {
  const sealed = openSealed(stored, key);
  if (!sealed.ok) return sealed;
  const v = verifyPreparedCommand(current.command);
  if (!v.ok) return { ok: false, code: "approval_stale", message: v.message };
  if (v.command.run_id !== current.runId) return { ok: false, code: "approval_stale", message: "the command belongs to another run" };
  return matchBinding(sealed.record, commandBindingFor(current.runId, v.command), current);
}

/** The stored record, when it parses and its MAC holds. */
function openSealed(stored: unknown, key: Uint8Array): { ok: true; record: ApprovalRecord } | Extract<ApprovalCheck, { ok: false }> {
  if (stored === null || stored === undefined) return { ok: false, code: "approval_unknown", message: "no decision is recorded for this action" };
  const parsed = ApprovalRecord.safeParse(stored);
  if (!parsed.success) return { ok: false, code: "approval_stale", message: `approval record is invalid: ${describeZodError(parsed.error)}` };
  const record = parsed.data;
  const { mac, ...body } = record;
  const expected = Buffer.from(macOf(body, key), "hex");
  if (!timingSafeEqual(expected, Buffer.from(mac, "hex"))) {
    return { ok: false, code: "approval_stale", message: "approval record was altered (MAC mismatch)" };
  }
  return { ok: true, record };
}

function matchBinding(record: ApprovalRecord, want: ApprovalBinding, current: { workspaceDigest: string }): ApprovalCheck {
  const b = record.binding;
  if (b.run_id !== want.run_id) return { ok: false, code: "approval_stale", message: "approval belongs to another run" };
  if (b.action_id !== want.action_id) return { ok: false, code: "approval_stale", message: "approval is for a different action" };
  if (b.args_digest !== want.args_digest) return { ok: false, code: "approval_stale", message: "approval is for different arguments" };
  if (b.workspace_digest !== want.workspace_digest) return { ok: false, code: "approval_stale", message: "approval is for a different workspace state" };
  if (current.workspaceDigest !== b.workspace_digest) {
    return { ok: false, code: "approval_stale", message: "the workspace changed since the action was proposed; re-read and propose again" };
  }
  if (record.decision === "rejected") {
    return { ok: false, code: "approval_rejected", message: `rejected: ${record.reason ?? "no reason given"}` };
  }
  return { ok: true, record };
}
