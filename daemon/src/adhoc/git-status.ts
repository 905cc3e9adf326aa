import { createHash } from "node:crypto";
import type fs from "node:fs";
import path from "node:path";
import git from "isomorphic-git";
import { gitignoreRules } from "../workspace/gitignore.js";
import { type ConfinedFs, confinedFs } from "./confined-fs.js";
import { type CacheTree, type IndexEntry, parseIndex } from "./git-index.js";

/**
 * What `git status` would list (modified, staged, deleted, unmerged,
 * untracked and not ignored), computed from git's on-disk data and never by
 * running git: the index (git-index.ts), the worktree's stat data, HEAD's tree
 * (isomorphic-git's object reader: loose and packed objects, data only), and
 * the `.gitignore` rules. Every read goes through the confined fs.
 *
 * Like git, a tracked file is hashed only when its stat data differs from
 * what the index recorded, or when it is "racy" (changed in the same instant
 * the index was written, so equal stat data proves nothing). Runs
 * synchronously where it can: it is meant to run in a worker thread
 * (git-state-worker.ts), and the caller owns the time bound.
 */
export interface StatusResult {
  files: string[];
  unavailable: string | null;
}

const MODE_FILE = 0o100644;
const MODE_EXEC = 0o100755;
const MODE_LINK = 0o120000;
const MODE_GITLINK = 0o160000;
const S_IFMT = 0o170000;

export async function gitStatus(workspace: string, maxEntries: number): Promise<StatusResult> {
  const dir = path.resolve(workspace);
  const gitdir = path.join(dir, ".git");
  const cfs = confinedFs(dir, { maxEntries, deadline: Number.POSITIVE_INFINITY, now: () => 0 });
  const limited = (): StatusResult | null => (cfs.stopped() === null ? null : { files: [], unavailable: `it has over ${maxEntries} files and folders` });

  const config = cfs.sync.readFile(path.join(gitdir, "config"))?.toString("utf8") ?? "";
  if (/^\s*objectformat\s*=\s*sha256\s*$/im.test(config)) return { files: [], unavailable: "it uses SHA-256 object names, which are not read here" };

  const indexFile = path.join(gitdir, "index");
  const indexStat = cfs.sync.lstat(indexFile);
  // an entry takes at least 64 bytes; a larger file than the entry cap allows is not read into memory
  if (indexStat !== null && indexStat.size > BigInt(maxEntries) * 512n) return { files: [], unavailable: `it has over ${maxEntries} files and folders` };
  const indexBytes = cfs.sync.readFile(indexFile);
  let entries: IndexEntry[] = [];
  let cacheTree: CacheTree = new Map();
  if (indexBytes !== null && indexStat !== null) {
    const read = parseIndex(indexBytes);
    if (!read.ok) return { files: [], unavailable: read.reason };
    entries = read.entries;
    cacheTree = read.cacheTree;
    if (entries.length > maxEntries) return { files: [], unavailable: `it has over ${maxEntries} files and folders` };
  }
  const dirty = new Set<string>();
  const tracked = new Map<string, IndexEntry>();
  for (const e of entries) {
    if (e.stage !== 0)
      dirty.add(e.path); // a conflict: unmerged
    else tracked.set(e.path, e);
  }

  for (const e of tracked.values()) {
    if (e.intentToAdd || (!e.skipWorktree && worktreeDiffers(cfs, dir, e, indexStat))) dirty.add(e.path);
  }
  const stop = limited();
  if (stop) return stop;

  let head: HeadTree;
  try {
    head = await headTree(cfs, dir, gitdir, cacheTree);
  } catch (err) {
    return limited() ?? { files: [], unavailable: `its git data could not be read (${errorCode(err)})` };
  }
  for (const [p, e] of tracked) {
    if (underSame(p, head.same)) continue;
    const h = head.files.get(p);
    if (h === undefined || h.oid !== e.oid || h.mode !== e.mode) dirty.add(p);
  }
  for (const p of head.files.keys()) if (!tracked.has(p)) dirty.add(p);

  for (const p of untracked(cfs, dir, tracked)) dirty.add(p);
  // a walk cut short answers "not there" for the rest: its list would be wrong, so there is none
  return limited() ?? { files: [...dirty].sort(), unavailable: null };
}

/** the worktree copy differs from the index entry; hashes only when the stat data cannot tell */
function worktreeDiffers(cfs: ConfinedFs, dir: string, e: IndexEntry, indexStat: fs.BigIntStats | null): boolean {
  const abs = path.join(dir, e.path);
  const st = cfs.sync.lstat(abs);
  if (st === null) return true; // deleted
  if ((e.mode & S_IFMT) === MODE_GITLINK) return !st.isDirectory(); // a submodule's own state is its own
  const mode = st.isSymbolicLink() ? MODE_LINK : st.isFile() ? (Number(st.mode) & 0o100 ? MODE_EXEC : MODE_FILE) : null;
  if (mode === null || mode !== e.mode) return true; // a type or executable-bit change
  const sizeSame = Number(st.size % 4294967296n) === e.size;
  // git records size 0 for an entry it found racily clean but changed ("smudged"): only the content can tell
  if (!sizeSame && e.size !== 0) return true;
  const same =
    sizeSame &&
    Number(st.mtimeNs / 1_000_000_000n) === e.mtimeS &&
    Number(st.mtimeNs % 1_000_000_000n) === e.mtimeNs &&
    Number(st.ctimeNs / 1_000_000_000n) === e.ctimeS &&
    Number(st.ctimeNs % 1_000_000_000n) === e.ctimeNs &&
    Number(st.ino % 4294967296n) === e.ino &&
    Number(st.uid) === e.uid &&
    Number(st.gid) === e.gid;
  // racy: the file was written in the same instant as (or after) the index, so equal stat data proves nothing
  const racy = indexStat === null || BigInt(e.mtimeS) * 1_000_000_000n + BigInt(e.mtimeNs) >= indexStat.mtimeNs;
  if (same && !racy) return false;
  const content = mode === MODE_LINK ? linkBytes(cfs, abs) : cfs.sync.readFile(abs);
  if (content === null) return true;
  return blobOid(content) !== e.oid;
}

function linkBytes(cfs: ConfinedFs, abs: string): Buffer | null {
  const target = cfs.sync.readlink(abs);
  return target === null ? null : Buffer.from(target, "utf8");
}

/** git's object name for a blob: sha1 of `blob <length>\0` and the content */
export function blobOid(content: Buffer): string {
  return createHash("sha1").update(`blob ${content.length}\0`).update(content).digest("hex");
}

interface HeadTree {
  /** HEAD's files outside `same`: path → blob name and mode */
  files: Map<string, { oid: string; mode: number }>;
  /** folders whose index entries are exactly HEAD's (their cache-tree name is HEAD's tree): not read */
  same: Set<string>;
}

/** a path lies in a folder the cache-tree proved equal to HEAD ("" is the root) */
function underSame(p: string, same: Set<string>): boolean {
  if (same.size === 0) return false;
  if (same.has("")) return true;
  for (let i = p.indexOf("/"); i >= 0; i = p.indexOf("/", i + 1)) if (same.has(p.slice(0, i))) return true;
  return false;
}

/** HEAD's tree, read only where the cache-tree cannot vouch for it; empty when HEAD names no commit yet */
async function headTree(cfs: ConfinedFs, dir: string, gitdir: string, cacheTree: CacheTree): Promise<HeadTree> {
  const out: HeadTree = { files: new Map(), same: new Set() };
  const fsc = cfs.client;
  let commit: string;
  try {
    commit = await git.resolveRef({ fs: fsc, dir, gitdir, ref: "HEAD" });
  } catch (err) {
    if ((err as { code?: unknown }).code === "NotFoundError") return out; // an unborn branch: no commit yet
    throw err;
  }
  const cache = {};
  const { commit: c } = await git.readCommit({ fs: fsc, dir, gitdir, oid: commit, cache });
  const pending: Array<[string, string]> = [["", c.tree]];
  while (pending.length > 0) {
    const [prefix, oid] = pending.pop()!;
    if (cacheTree.get(prefix) === oid) {
      out.same.add(prefix);
      continue;
    }
    const { tree } = await git.readTree({ fs: fsc, dir, gitdir, oid, cache });
    for (const t of tree) {
      const p = prefix === "" ? t.path : `${prefix}/${t.path}`;
      if (t.type === "tree") pending.push([p, t.oid]);
      else out.files.set(p, { oid: t.oid, mode: Number.parseInt(t.mode, 8) });
    }
  }
  return out;
}

/**
 * Files below `dir` that the index does not track and `.gitignore` does not
 * hide, one by one (like `--untracked-files=all`). An ignored folder is not
 * entered; a folder holding its own `.git` is another repository and is
 * listed as `name/`, as git lists it.
 */
function untracked(cfs: ConfinedFs, dir: string, tracked: Map<string, IndexEntry>): string[] {
  const rules = gitignoreRules(dir);
  const out: string[] = [];
  const pending: string[] = [""];
  while (pending.length > 0 && cfs.stopped() === null) {
    const rel = pending.pop()!;
    const entries = cfs.sync.readdir(rel === "" ? dir : path.join(dir, rel));
    if (entries === null) continue;
    for (const d of entries) {
      const p = rel === "" ? d.name : `${rel}/${d.name}`;
      if (d.isDirectory()) {
        if (d.name === ".git" || tracked.has(p)) continue; // the repository itself, or a submodule
        if (rules.ignores(p, true)) continue;
        if (cfs.sync.lstat(path.join(dir, p, ".git")) !== null) {
          if (!hasTrackedBelow(tracked, p)) out.push(`${p}/`);
          continue;
        }
        pending.push(p);
      } else if ((d.isFile() || d.isSymbolicLink()) && !tracked.has(p) && !rules.ignores(p, false)) {
        out.push(p);
      }
    }
  }
  return out;
}

function hasTrackedBelow(tracked: Map<string, IndexEntry>, dirRel: string): boolean {
  const prefix = `${dirRel}/`;
  for (const p of tracked.keys()) if (p.startsWith(prefix)) return true;
  return false;
}

function errorCode(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : "unreadable";
}
