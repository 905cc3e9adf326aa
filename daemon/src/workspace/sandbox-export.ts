import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import picomatch from "picomatch";
import type { ExportSpec, LinksLeftOut } from "../contracts/sandbox.js";
import { MiniAgentError } from "../errors.js";
import { judgeLinks, linksLeftOut, type LinkNode } from "./export-links.js";
import { createForbiddenMatcher, type Matcher } from "./forbidden.js";
import { openNoFollow } from "./read.js";
import { walkTree, type WalkEntry, type WalkStat } from "./walk.js";

/**
 * What of a workspace may leave the host for a sandbox (issue 10): the rule
 * read_file applies to the model, applied to every tar that goes into a
 * sandbox (warm sync, fresh runs, the Verifier, acceptance). A model-written
 * test prints whatever /workspace holds into an observation the model reads,
 * so a file the model may not read must not be in /workspace either.
 */

/** Why an entry's shape is refused: the part of the rule that no glob and no opt-in can change. */
export type ShapeRefusal = "symlink" | "special" | "hard_link";

/**
 * Shared with resolveSafePath: a symlink is never followed or copied, a
 * fifo/socket/device never read, and a hard-linked file (nlink > 1) refused
 * because its other name may sit outside the workspace.
 */
export function shapeRefusal(type: WalkEntry["type"], nlink: number): ShapeRefusal | null {
  if (type === "symlink") return "symlink";
  if (type === "other") return "special";
  if (type === "file" && nlink > 1) return "hard_link";
  return null;
}

/** The walk's kind of an lstat result. */
export function entryType(st: { isSymbolicLink(): boolean; isDirectory(): boolean; isFile(): boolean }): WalkEntry["type"] {
  return st.isSymbolicLink() ? "symlink" : st.isDirectory() ? "dir" : st.isFile() ? "file" : "other";
}

export const SHAPE_REFUSAL_TEXT: Record<ShapeRefusal, string> = {
  symlink: "is a symlink; symlinks are refused",
  special: "is not a regular file",
  hard_link: "is hard-linked; hard-linked files are refused",
};

/**
 * Repository metadata never enters a sandbox, not even by opt-in: hooks,
 * remotes with credentials, objects of files the task forbids.
 */
const NEVER_EXPORTED = ["**/.git", "**/.hg", "**/.svn"];

export interface ExportRule {
  forbidden: Matcher;
  include: Matcher;
  never: Matcher;
  /** whether any opt-in exists: without one, a forbidden folder is not even entered */
  canLift: boolean;
}

/** Tests every prefix, like the forbidden matcher: a glob naming a folder covers what is beneath it. */
function prefixMatcher(globs: readonly string[], opts: picomatch.PicomatchOptions): Matcher {
  if (globs.length === 0) return () => false;
  const isMatch = picomatch([...globs], opts);
  return (rel) => {
    const parts = rel.split("/");
    for (let i = 1; i <= parts.length; i++) if (isMatch(parts.slice(0, i).join("/"))) return true;
    return false;
  };
}

/**
 * An opt-in lifts the one path it names, compared as a string: not a glob (a
 * `*` recorded by an older run matches only a file named `*`), not a prefix (a
 * folder named by an opt-in would lift every forbidden file beneath it), and
 * case-sensitive. A forbidden folder above a named file still goes in, empty
 * but for that file (listExport's "parent").
 */
function exactMatcher(paths: readonly string[]): Matcher {
  const named = new Set(paths);
  return (rel) => named.has(rel);
}

export function createExportRule(spec: ExportSpec = { forbidden: [], include: [] }): ExportRule {
  return {
    // the very matcher read_file uses (built-in globs plus the task's)
    forbidden: createForbiddenMatcher(spec.forbidden),
    include: exactMatcher(spec.include),
    never: prefixMatcher(NEVER_EXPORTED, { dot: true, nocase: true }),
    canLift: spec.include.length > 0,
  };
}

export type ExportVerdict = { ok: true; via: "rule" | "include" } | { ok: false; reason: "repository_metadata" | "forbidden" | ShapeRefusal };

/**
 * The one decision: may this workspace entry leave the host for a sandbox? A
 * symlink is refused here as read_file refuses it; listExport lets one in only
 * when its own path passes the rule without an opt-in and its resolution
 * passes the link rule (export-links.ts).
 */
export function exportVerdict(rule: ExportRule, rel: string, type: WalkEntry["type"], nlink: number): ExportVerdict {
  if (rule.never(rel)) return { ok: false, reason: "repository_metadata" };
  const shape = shapeRefusal(type, nlink);
  if (shape) return { ok: false, reason: shape };
  if (!rule.forbidden(rel)) return { ok: true, via: "rule" };
  return rule.include(rel) ? { ok: true, via: "include" } : { ok: false, reason: "forbidden" };
}

export interface ExportEntry {
  rel: string;
  abs: string;
  type: "file" | "dir" | "symlink";
  /** a symlink's target as it enters the sandbox: relative, through real folders only (export-links.ts) */
  target?: string;
  /** the walk's lstat: the packer checks the opened file is still this one */
  stat: WalkStat;
  /** "parent": a forbidden folder sent as an empty folder only because an opted-in path lies beneath it; "overlay": from ExportSpec.overlay, not the workspace */
  via: "rule" | "include" | "parent" | "overlay";
}

export interface ExportList {
  /** sorted by relative path, so every folder comes before what it holds */
  entries: ExportEntry[];
  /** the paths only an opt-in let through (for the log and the trace; never their contents) */
  included: string[];
  /** the symlinks whose own path the rule lets out but whose resolution it refused; null when none was */
  linksLeftOut: LinksLeftOut | null;
}

/** The root must be a real directory (not a symlink): nothing outside it may be sent. */
function checkRoot(dir: string): string {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(dir);
  } catch (err) {
    throw new MiniAgentError("not_found", `workspace ${dir} does not exist`, { cause: err });
  }
  if (!st.isDirectory()) throw new MiniAgentError("invalid_fields", `workspace ${dir} is not a directory (symlinks are not followed)`);
  return path.resolve(dir);
}

/**
 * Every workspace entry that may go into a sandbox under `spec`. The tree is
 * walked without following links; a refused folder is not entered, except a
 * forbidden one while an opt-in might name something beneath it.
 */
export async function listExport(dir: string, spec?: ExportSpec): Promise<ExportList> {
  const root = checkRoot(dir);
  const rule = createExportRule(spec);
  // a folder that enters as a read-only dependency layer is mounted, never copied (issue 25: a 157 MB node_modules filled the tmpfs)
  const layered = new Set<string>((spec?.layers ?? []).map((l) => l.folder));
  const walked = await walkTree(root, {
    skip: (rel, type) => layered.has(rel) || rule.never(rel) || type === "other" || (!rule.canLift && rule.forbidden(rel)),
  });
  const allowed = new Map<string, ExportEntry["via"]>();
  const linkNames = new Set<string>();
  for (const e of walked) {
    if (e.type === "symlink") {
      // an opt-in names a file the tests need; it never lifts the rule for a link (contracts: SandboxIncludeGlob)
      if (!rule.never(e.rel) && !rule.forbidden(e.rel)) linkNames.add(e.rel);
      continue;
    }
    const v = exportVerdict(rule, e.rel, e.type, e.nlink);
    if (v.ok) allowed.set(e.rel, v.via);
  }
  // a forbidden folder holding an opted-in path goes in as a folder, without its other content
  for (const rel of [...allowed.keys()]) {
    for (let i = rel.lastIndexOf("/"); i > 0; i = rel.lastIndexOf("/", i - 1)) {
      const parent = rel.slice(0, i);
      if (allowed.has(parent)) break;
      allowed.set(parent, "parent");
    }
  }
  const links = await judgeWalkedLinks(root, walked, allowed, linkNames);
  const entries: ExportEntry[] = [];
  for (const e of walked) {
    if (e.type === "symlink") {
      const v = links.get(e.rel);
      if (v?.ok) entries.push({ rel: e.rel, abs: e.abs, type: "symlink", target: v.target, stat: e.stat, via: "rule" });
      continue;
    }
    const via = allowed.get(e.rel);
    if (via === undefined || (e.type !== "file" && e.type !== "dir")) continue;
    entries.push({ rel: e.rel, abs: e.abs, type: e.type, stat: e.stat, via });
  }
  const sent = spec?.overlay === undefined ? entries : await withOverlay(entries, spec.overlay);
  return { entries: sent, included: sent.filter((e) => e.via === "include").map((e) => e.rel), linksLeftOut: linksLeftOut(links) };
}

/** Reads the walked links' targets and judges each by the link rule over what the walk found. */
async function judgeWalkedLinks(
  root: string,
  walked: readonly WalkEntry[],
  allowed: ReadonlyMap<string, ExportEntry["via"]>,
  linkNames: ReadonlySet<string>,
): Promise<ReturnType<typeof judgeLinks>> {
  const nodes = new Map<string, LinkNode>();
  for (const e of walked) {
    if (e.type === "symlink") {
      // a link that vanished since the walk names nothing
      const target = await fsp.readlink(e.abs).catch(() => "");
      nodes.set(e.rel, { type: "symlink", exported: linkNames.has(e.rel), target });
    } else if (e.type === "file" || e.type === "dir") {
      nodes.set(e.rel, { type: e.type, exported: allowed.has(e.rel) });
    }
  }
  return judgeLinks(root, nodes);
}

/** A file that no longer is what the walk saw: the copy is abandoned, never sent half-checked. */
export function changedWhileCopying(rel: string): MiniAgentError {
  return new MiniAgentError("sandbox_error", `${rel} changed while the workspace was copied into the sandbox; run again`);
}

/**
 * Opens an exported file for copying. O_NOFOLLOW, and the OPEN descriptor
 * must still be the regular, singly linked file the walk saw: a file swapped
 * for a link (or hard-linked) after the walk is refused, never sent.
 */
export async function openExported(e: ExportEntry): Promise<{ fh: fsp.FileHandle; size: number }> {
  const changed = () => changedWhileCopying(e.rel);
  const opened = await openNoFollow(e.abs);
  if (!opened.ok) throw changed();
  try {
    const st = await opened.fh.stat({ bigint: true });
    if (!st.isFile() || st.nlink !== 1n || st.ino !== e.stat.ino || st.dev !== e.stat.dev) throw changed();
    return { fh: opened.fh, size: Number(st.size) };
  } catch (err) {
    await opened.fh.close();
    throw err;
  }
}

/**
 * An overlay folder laid over an export (ExportSpec.overlay): a task's hidden
 * tests enter the Verifier's fresh sandboxes at the workspace paths they name,
 * replacing the workspace's file there. The folder is task data, not the
 * workspace, so its shape is held to the export rule's: a link or a special
 * file would make the overlay reach outside it, and refuses the whole copy
 * (never a partial overlay, which could turn a missing test into a green run).
 */

/** Depth-first order with sorted names, as walkTree gives: every folder before what it holds. */
function byTreeOrder(a: string, b: string): number {
  const pa = a.split("/");
  const pb = b.split("/");
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    if (pa[i] !== pb[i]) return pa[i]! < pb[i]! ? -1 : 1;
  }
  return pa.length - pb.length;
}

const KIND_TEXT: Record<ExportEntry["type"], string> = { file: "file", dir: "folder", symlink: "symlink" };

function refused(rel: string, why: string): MiniAgentError {
  return new MiniAgentError("path_denied", `hidden test overlay: ${rel} ${why}`);
}

/** The export `entries` with the overlay's files laid over them (sorted as before); a refused shape throws path_denied. */
export async function withOverlay(entries: readonly ExportEntry[], overlayDir: string): Promise<ExportEntry[]> {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(overlayDir);
  } catch (err) {
    throw new MiniAgentError("not_found", `hidden test overlay ${overlayDir} does not exist`, { cause: err });
  }
  if (!st.isDirectory()) throw refused(path.basename(overlayDir), "is not a folder (symlinks are not followed)");
  const byRel = new Map(entries.map((e) => [e.rel, e]));
  for (const o of await walkTree(path.resolve(overlayDir))) {
    const shape = shapeRefusal(o.type, o.nlink);
    if (shape) throw refused(o.rel, SHAPE_REFUSAL_TEXT[shape]);
    const was = byRel.get(o.rel);
    if (o.type !== "file" && o.type !== "dir") continue;
    // a file where the workspace has a folder (or the reverse) would leave the sandbox's tree half of each;
    // a file laid over a workspace link replaces the link, a folder cannot
    if (was && was.type !== o.type && !(was.type === "symlink" && o.type === "file"))
      throw refused(o.rel, `is a ${o.type === "file" ? "file" : "folder"} where the workspace has a ${KIND_TEXT[was.type]}`);
    if (was && o.type === "dir") continue;
    byRel.set(o.rel, { rel: o.rel, abs: o.abs, type: o.type, stat: o.stat, via: "overlay" });
  }
  return [...byRel.values()].sort((a, b) => byTreeOrder(a.rel, b.rel));
}
