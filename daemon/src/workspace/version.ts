import type { Matcher } from "./forbidden.js";
import { sha256Hex } from "./hash.js";
import { computeManifest } from "./manifest.js";
import { readNoFollow } from "./read.js";
import { resolveSafePath } from "./safe-path.js";

/**
 * The workspace digest every part compares (apply_patch at proposal and commit,
 * approvals, recovery, Verifier): the manifest digest with the control dir left out.
 */
export async function workspaceDigest(workspaceRoot: string, controlDir?: string): Promise<string> {
  const m = await computeManifest(workspaceRoot, { excludeAbs: controlDir === undefined ? [] : [controlDir] });
  return m.digest;
}

/**
 * A file's current version for three-state recovery: its SHA-256, `absent`, or
 * null when the path cannot be proven safe (symlink, hard link, special file)
 * and the caller must stop as uncertain.
 */
export async function currentFileVersion(workspaceRoot: string, rel: string, opts: { forbidden?: Matcher; controlDir?: string } = {}): Promise<string | null> {
  const p = await resolveSafePath(workspaceRoot, rel, {
    purpose: "create",
    forbidden: opts.forbidden ?? (() => false),
    controlDir: opts.controlDir,
  });
  if (!p.ok || p.kind === "dir") return null;
  if (p.kind === "absent") return "absent";
  const read = await readNoFollow(p.abs, { verifyPath: true });
  if (!read.ok) return read.reason === "absent" ? "absent" : null;
  if (read.nlink > 1) return null;
  return sha256Hex(read.bytes);
}
