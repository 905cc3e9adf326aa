import { createTwoFilesPatch } from "diff";
import { PreparedAction, type WriteReceipt, type ToolArgs, type ToolResult } from "../contracts/tool-call.js";
import { describeZodError } from "../contracts/common.js";
import { canonicalJson, sha256Hex } from "../workspace/hash.js";
import { readNoFollow } from "../workspace/read.js";
import { resolveSafePath } from "../workspace/safe-path.js";
import { workspaceDigest } from "../workspace/version.js";
import { toolEnv, type ToolContext } from "./context.js";
import { errorResult, okResult } from "./result.js";
import { decodeUtf8 } from "./text.js";
import { atomicWrite } from "./atomic-write.js";
import { patchText } from "./patch-text.js";
import { isMiniAgentError } from "../errors.js";

export type PrepareOutcome = { ok: true; action: PreparedAction } | { ok: false; result: ToolResult };
export type CommitOutcome = { ok: true; receipt: WriteReceipt; result: ToolResult } | { ok: false; result: ToolResult };

/** SHA-256 of the canonical {name, arguments}: what an approval's argument digest is. */
export function argsDigest(name: string, args: unknown): string {
  return sha256Hex(canonicalJson({ name, arguments: args }));
}

/**
 * What an action id is derived from. The run and the call make it unique across
 * runs (the same replay driven twice, or two runs proposing the same patch to
 * the same workspace, must never share an id: an audit would confuse them) and
 * across proposals within a run (the same patch proposed again after a
 * rejection is a new action with its own decision). The content and workspace
 * digest tie it to what is written. Nothing random: a replayed or resumed run
 * proposes the same call ids and so reproduces its action ids.
 */
export interface ActionIdInput {
  runId: string;
  callId: string;
  name: string;
  args: unknown;
  manifestDigest: string;
}

export function actionIdFor(i: ActionIdInput): string {
  const material = { run_id: i.runId, call_id: i.callId, name: i.name, arguments: i.args, manifest_digest: i.manifestDigest };
  return `act_${sha256Hex(canonicalJson(material)).slice(0, 32)}`;
}

export function unifiedDiff(rel: string, before: string | null, after: string): string {
  const patch = createTwoFilesPatch(before === null ? "/dev/null" : `a/${rel}`, `b/${rel}`, before ?? "", after, undefined, undefined, { context: 3 });
  // drop the library's "=====" underline so the text is a plain `git apply`-style diff
  return patch.replace(/^=+\n/, "");
}

/**
 * apply_patch, first half: checks the contract and records what the write
 * WOULD do. No side effects; deterministic for a given workspace.
 */
export async function prepareApplyPatch(callId: string, args: ToolArgs<"apply_patch">, ctx: ToolContext, runId: string): Promise<PrepareOutcome> {
  const fail = (code: Parameters<typeof errorResult>[1], message: string): PrepareOutcome => ({ ok: false, result: errorResult(callId, code, message) });
  const env = toolEnv(ctx);
  const p = await resolveSafePath(ctx.workspaceRoot, args.path, { purpose: "create", forbidden: env.forbidden, controlDir: ctx.controlDir });
  if (!p.ok) return fail(p.code, p.message);
  if (!env.writable(p.rel)) return fail("not_writable", `${p.rel} is not writable for this task (writable: ${ctx.task.writable.join(", ")})`);
  if (p.kind === "dir") return fail("path_denied", `${p.rel} is a directory`);

  let before: string | null = null;
  let beforeHash = "absent";
  let mode = 0o644;
  if (p.kind === "absent") {
    if (args.version !== "absent") return fail("stale_version", `${p.rel} does not exist (any more); re-read before patching`);
    if (!env.creatable(p.rel)) {
      return fail("not_writable", `new files may only be created at: ${ctx.task.creatable.join(", ") || "(nowhere)"}`);
    }
    if (args.old !== "") return fail("invalid_fields", "creating a file requires old to be empty");
  } else {
    if (args.version === "absent") return fail("stale_version", `${p.rel} already exists; read it and quote its version`);
    const read = await readNoFollow(p.abs, { maxBytes: env.limits.patchMaxFileBytes, verifyPath: true });
    if (!read.ok) {
      if (read.reason === "too_large") return fail("too_large", `${p.rel} is larger than ${env.limits.patchMaxFileBytes} bytes`);
      return fail("path_denied", `${p.rel} cannot be read safely (${read.reason})`);
    }
    if (read.nlink > 1) return fail("path_denied", `${p.rel} is hard-linked; hard-linked files are refused`);
    beforeHash = sha256Hex(read.bytes);
    if (beforeHash !== args.version) return fail("stale_version", `${p.rel} changed since version ${args.version.slice(0, 12)}…; re-read it`);
    before = decodeUtf8(read.bytes);
    if (before === null) return fail("path_denied", `${p.rel} is not UTF-8 text`);
    mode = p.mode & 0o7777;
    if (args.old === "") return fail("invalid_fields", "old must not be empty when patching an existing file");
  }

  const patched = patchText(before, args.old, args.new);
  if (!patched.ok) {
    if (patched.code === "no_match") return fail("no_match", `old text does not occur in ${p.rel}`);
    if (patched.code === "non_unique_match")
      return fail("non_unique_match", `old text occurs ${patched.count} times in ${p.rel}; include more context so it occurs once`);
    if (patched.code === "no_op") return fail("no_op", "the patch would not change the file");
    return fail("invalid_fields", before === null ? "creating a file requires old to be empty" : "old must not be empty when patching an existing file");
  }
  const after = patched.after;
  if (Buffer.byteLength(after) > env.limits.patchMaxFileBytes) {
    return fail("too_large", `the patched file would exceed ${env.limits.patchMaxFileBytes} bytes`);
  }

  const normArgs = { ...args, path: p.rel };
  const manifestDigest = await workspaceDigest(ctx.workspaceRoot, ctx.controlDir);
  const action: PreparedAction = {
    schema_version: 1,
    action_id: actionIdFor({ runId, callId, name: "apply_patch", args: normArgs, manifestDigest }),
    run_id: runId,
    call_id: callId,
    tool: "apply_patch",
    arguments: normArgs,
    path: p.rel,
    created: before === null,
    before_hash: beforeHash,
    after_hash: sha256Hex(after),
    manifest_digest: manifestDigest,
    args_digest: argsDigest("apply_patch", normArgs),
    diff: unifiedDiff(p.rel, before, after),
    new_content: after,
    mode,
  };
  return { ok: true, action };
}

/**
 * Re-derives everything the action's id and hashes promise from its own
 * content, so a record altered in the ledger is refused (tamper detection).
 */
export function verifyPreparedAction(raw: unknown): { ok: true; action: PreparedAction } | { ok: false; message: string } {
  const parsed = PreparedAction.safeParse(raw);
  if (!parsed.success) return { ok: false, message: `action record is invalid: ${describeZodError(parsed.error)}` };
  const a = parsed.data;
  if (a.arguments.path !== a.path) return { ok: false, message: "action record path does not match its arguments" };
  if (actionIdFor({ runId: a.run_id, callId: a.call_id, name: a.tool, args: a.arguments, manifestDigest: a.manifest_digest }) !== a.action_id)
    return { ok: false, message: "action id does not match the action's content" };
  if (argsDigest(a.tool, a.arguments) !== a.args_digest) return { ok: false, message: "argument digest does not match the arguments" };
  if (sha256Hex(a.new_content) !== a.after_hash) return { ok: false, message: "new content does not match after_hash" };
  if (a.created !== (a.before_hash === "absent")) return { ok: false, message: "created flag contradicts before_hash" };
  return { ok: true, action: a };
}

function rederiveContent(action: PreparedAction, before: string | null): string | null {
  const { old, new: replacement } = action.arguments;
  if (before === null) return action.created ? replacement : null;
  const i = before.indexOf(old);
  if (old === "" || i === -1 || before.indexOf(old, i + 1) !== -1) return null;
  return before.slice(0, i) + replacement + before.slice(i + old.length);
}

/**
 * apply_patch, second half: the write. Re-checks the record, the path, the
 * whole workspace digest and the file's before-hash; on any difference nothing
 * is written (approval_stale) and an external edit is kept. The write goes
 * through a temp file in the CONTROL dir, fsync, rename, fsync of the folder.
 * The caller records intent before and the receipt after this call.
 */
export async function commitPreparedAction(raw: PreparedAction, ctx: ToolContext): Promise<CommitOutcome> {
  const callId = typeof raw?.call_id === "string" ? raw.call_id : "invalid";
  const fail = (code: Parameters<typeof errorResult>[1], message: string): CommitOutcome => ({ ok: false, result: errorResult(callId, code, message) });
  const v = verifyPreparedAction(raw);
  if (!v.ok) return fail("approval_stale", v.message);
  const action = v.action;
  const env = toolEnv(ctx);
  const p = await resolveSafePath(ctx.workspaceRoot, action.path, { purpose: "create", forbidden: env.forbidden, controlDir: ctx.controlDir });
  if (!p.ok) return fail(p.code, p.message);
  if (!env.writable(p.rel) || (action.created && !env.creatable(p.rel))) return fail("not_writable", `${p.rel} is not writable for this task`);
  if (p.kind === "dir") return fail("approval_stale", `${p.rel} is now a directory`);

  const digest = await workspaceDigest(ctx.workspaceRoot, ctx.controlDir);
  if (digest !== action.manifest_digest) {
    return fail("approval_stale", "the workspace changed since this action was proposed; nothing was written; re-read and propose again");
  }
  let current = "absent";
  let currentText: string | null = null;
  if (p.kind === "file") {
    const read = await readNoFollow(p.abs, { verifyPath: true });
    if (!read.ok || read.nlink > 1) return fail("path_denied", `${p.rel} cannot be read safely`);
    current = sha256Hex(read.bytes);
    currentText = decodeUtf8(read.bytes);
  }
  if (current !== action.before_hash) return fail("approval_stale", `${p.rel} changed since this action was proposed; nothing was written`);
  // the id covers the arguments, not new_content: re-derive the content from them so a swapped body is refused
  if (rederiveContent(action, currentText) !== action.new_content) {
    return fail("approval_stale", "action record content does not follow from its arguments; nothing was written");
  }
  // the diff is what the approver was shown, and the mode is not in the id: both must follow from the file too
  if (unifiedDiff(p.rel, currentText, action.new_content) !== action.diff) {
    return fail("approval_stale", "action record diff does not match the write; nothing was written");
  }
  if (action.mode !== (p.kind === "file" ? p.mode & 0o7777 : 0o644)) {
    return fail("approval_stale", "action record file mode does not match the file; nothing was written");
  }

  try {
    await atomicWrite({
      workspaceRoot: ctx.workspaceRoot,
      controlDir: ctx.controlDir,
      rel: p.rel,
      content: action.new_content,
      mode: action.mode,
      tempName: `${action.action_id}.tmp`,
      forbidden: env.forbidden,
    });
  } catch (err) {
    // atomicWrite only throws before the rename, so the target is untouched
    if (isMiniAgentError(err)) return fail(err.code, err.message);
    return fail("internal", "write failed; nothing was changed");
  }
  const receipt: WriteReceipt = {
    schema_version: 1,
    action_id: action.action_id,
    path: action.path,
    before_hash: action.before_hash,
    after_hash: action.after_hash,
    created: action.created,
  };
  const result = okResult(callId, { path: action.path, version: action.after_hash, created: action.created, action_id: action.action_id, diff: action.diff });
  return { ok: true, receipt, result };
}
