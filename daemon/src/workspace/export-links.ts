import fs from "node:fs";
import path from "node:path";
import { LINKS_LEFT_OUT_NAMED, type LinkLeftOutReason, type LinksLeftOut } from "../contracts/sandbox.js";

/**
 * Which workspace symlinks enter a sandbox, and as what (the export rule's
 * part for links; listExport calls it, so runs, the Verifier, checks and eval
 * all apply the same one). Test suites use symlinked fixtures (tj/commander.js
 * has two): dropping every link failed tests in the sandbox that pass on the
 * host. A link goes in only when every hop of its resolution stays inside the
 * workspace, passes only through entries the export sends (folders, and links
 * whose own name the rule lets out), and ends on an exported entry: a link can
 * never carry a forbidden file, `.git` or anything outside into a sandbox.
 *
 * It goes in with its target rewritten as the relative path from its folder
 * to where it ends, through real folders only (a chain of links becomes one
 * hop, an absolute target inside the workspace becomes relative). So the
 * sandbox's extractor can check a target by its text alone (no `..` above
 * /workspace, sandbox-image/helper/untar.h), and what the text says is what
 * the kernel resolves there.
 */

/** Linux follows at most 40 links in one lookup (ELOOP). */
export const MAX_LINK_HOPS = 40;
/** The longest rewritten target sent; untar.h MAX_LINK refuses a longer one. */
export const MAX_LINK_TARGET = 1024;

/** One walked entry as the link resolution sees it. */
export interface LinkNode {
  type: "file" | "dir" | "symlink";
  /** a file or folder: the export sends it; a link: its own path passes the rule (its target is judged here) */
  exported: boolean;
  /** a link's target as readlink gives it */
  target?: string;
}

export type LinkVerdict = { ok: true; target: string } | { ok: false; reason: LinkLeftOutReason };

/** The target's path below `root` as components, or null when it is outside (absolute targets). */
function insideRoot(roots: readonly string[], abs: string): string[] | null {
  const norm = path.posix.normalize(abs);
  for (const r of roots) {
    if (norm === r) return [];
    if (norm.startsWith(`${r}/`)) return norm.slice(r.length + 1).split("/");
  }
  return null;
}

/**
 * Resolves the link at `rel` as the kernel would, component by component,
 * over `nodes` (the walk). `roots`: the workspace's absolute path as given and
 * as its real path, either of which an absolute target may name.
 */
export function linkVerdict(rel: string, nodes: ReadonlyMap<string, LinkNode>, roots: readonly string[], exists: (rel: string) => boolean): LinkVerdict {
  const start = nodes.get(rel);
  if (start?.type !== "symlink" || start.target === undefined) return { ok: false, reason: "dangling" };
  const done: string[] = rel.split("/").slice(0, -1);
  let todo: string[] = [];
  let hops = 0;
  // follows one link: its target replaces it, relative to the folder reached so far
  const follow = (target: string): LinkLeftOutReason | null => {
    if (++hops > MAX_LINK_HOPS) return "loop";
    if (target === "") return "dangling";
    if (path.posix.isAbsolute(target)) {
      const under = insideRoot(roots, target);
      if (under === null) return "outside";
      done.length = 0;
      todo = [...under, ...todo];
    } else {
      todo = [...target.split("/"), ...todo];
    }
    return null;
  };
  const first = follow(start.target);
  if (first) return { ok: false, reason: first };
  while (todo.length > 0) {
    const c = todo.shift()!;
    if (c === "" || c === ".") continue;
    if (c === "..") {
      if (done.length === 0) return { ok: false, reason: "outside" };
      done.pop();
      continue;
    }
    const at = [...done, c].join("/");
    const node = nodes.get(at);
    if (!node) return { ok: false, reason: exists(at) ? "not_exported" : "dangling" };
    if (!node.exported) return { ok: false, reason: "not_exported" };
    if (node.type === "symlink") {
      const why = follow(node.target ?? "");
      if (why) return { ok: false, reason: why };
      continue;
    }
    // a file in the middle of a path is ENOTDIR: the link names nothing
    if (node.type === "file" && todo.length > 0) return { ok: false, reason: "dangling" };
    done.push(c);
  }
  const target = path.posix.relative(rel.split("/").slice(0, -1).join("/"), done.join("/")) || ".";
  if (Buffer.byteLength(target) > MAX_LINK_TARGET) return { ok: false, reason: "too_long" };
  return { ok: true, target };
}

/** Judges every link of a walk; `root` is the workspace's resolved path. */
export function judgeLinks(root: string, nodes: ReadonlyMap<string, LinkNode>): Map<string, LinkVerdict> {
  let real = root;
  try {
    real = fs.realpathSync(root);
  } catch {
    // the root was just checked; a vanished one fails the copy elsewhere
  }
  const roots = real === root ? [root] : [root, real];
  const exists = (rel: string) => {
    try {
      fs.lstatSync(path.join(root, ...rel.split("/")));
      return true;
    } catch {
      return false;
    }
  };
  const out = new Map<string, LinkVerdict>();
  for (const [rel, node] of nodes) if (node.type === "symlink" && node.exported) out.set(rel, linkVerdict(rel, nodes, roots, exists));
  return out;
}

/** The left-out links counted by reason, the first few named; null when every link went in. */
export function linksLeftOut(verdicts: ReadonlyMap<string, LinkVerdict>): LinksLeftOut | null {
  const out: LinksLeftOut = { count: 0, by_reason: {}, paths: [] };
  for (const [rel, v] of [...verdicts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (v.ok) continue;
    out.count++;
    out.by_reason[v.reason] = (out.by_reason[v.reason] ?? 0) + 1;
    if (out.paths.length < LINKS_LEFT_OUT_NAMED) out.paths.push({ path: rel, reason: v.reason });
  }
  return out.count === 0 ? null : out;
}
