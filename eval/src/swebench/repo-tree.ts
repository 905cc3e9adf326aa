import fs from "node:fs";
import path from "node:path";
import git from "isomorphic-git";
import { MiniAgentError } from "../../../daemon/src/errors.js";
import { confinedFs } from "../../../daemon/src/adhoc/confined-fs.js";
import type { CopyLimits } from "../../../daemon/src/workspace/copy-limits.js";

/**
 * A SWE-bench instance's repository at its base commit, read as DATA. No git
 * program runs on the host: a repository's config, attributes and hooks can
 * make git run commands (a filter driver once ran from a repository's own
 * config), so the object store is read by isomorphic-git (pure JS, no
 * filters, hooks or processes) through the daemon's confined file system
 * (adhoc/confined-fs.ts): reads only, only below the repository's folder, a
 * link out of it (an `objects/info/alternates`, a symlinked pack) is simply
 * not there.
 */

/** A file of the tree: its bytes and whether git records it executable. */
export interface TreeFile {
  data: Buffer;
  exec: boolean;
}

export interface BaseTree {
  files: Map<string, TreeFile>;
  /** what was not taken, one line each: symlinks, submodules, repository metadata */
  skipped: string[];
  /** the folder it was read from */
  repoDir: string;
}

export interface TreeLimits extends CopyLimits {
  /** give up reading after this long */
  timeoutMs: number;
  now: () => number;
}

type Found = { ok: true; dir: string; gitdir: string } | { ok: false; why: string };

function lstat(p: string): fs.Stats | null {
  try {
    return fs.lstatSync(p);
  } catch {
    return null;
  }
}

function realOf(p: string): string | null {
  try {
    return fs.realpathSync(p);
  } catch {
    return null;
  }
}

/** Where `owner/name` may be under DIR: `owner__name` (SWE-bench's own naming), `owner/name`, `name`. */
export function repoCandidates(reposDir: string, repo: string): string[] {
  const [owner, name] = repo.split("/") as [string, string];
  return [path.join(reposDir, `${owner}__${name}`), path.join(reposDir, owner, name), path.join(reposDir, name)];
}

/**
 * The first candidate that is a real folder holding a `.git` folder (or a bare
 * repository). A candidate that is a symlink is refused, not followed (it
 * could name any folder of the host); a `.git` FILE names a git directory
 * elsewhere (a linked worktree, a submodule) and is refused too.
 */
export function findRepo(reposDir: string, repo: string): Found {
  const tried: string[] = [];
  for (const dir of repoCandidates(reposDir, repo)) {
    const st = lstat(dir);
    if (st === null) {
      tried.push(`${dir} (absent)`);
      continue;
    }
    // a link on the way (DIR/owner -> /elsewhere) is as bad as a linked folder: the real path must be where DIR says
    if (st.isSymbolicLink() || realOf(dir) !== path.join(realOf(reposDir) ?? "", path.relative(reposDir, dir)))
      return { ok: false, why: `${dir} is a symlink or lies under one; a repository is never read through a link` };
    if (!st.isDirectory()) {
      tried.push(`${dir} (not a folder)`);
      continue;
    }
    const dotGit = lstat(path.join(dir, ".git"));
    if (dotGit?.isDirectory()) return { ok: true, dir, gitdir: path.join(dir, ".git") };
    if (dotGit !== null)
      return {
        ok: false,
        why: `${dir}/.git is ${dotGit.isSymbolicLink() ? "a symlink" : "not a folder (a file naming a git directory elsewhere)"}; it is not followed`,
      };
    if (lstat(path.join(dir, "HEAD"))?.isFile() && lstat(path.join(dir, "objects"))?.isDirectory()) return { ok: true, dir, gitdir: dir };
    tried.push(`${dir} (no .git)`);
  }
  return { ok: false, why: `no repository for ${repo}; tried ${tried.join(", ")}` };
}

const SUBMODULE = "160000";
const SYMLINK = "120000";
const EXEC = "100755";

/** A tree entry's name a file system could misread: never written. */
function badName(name: string): boolean {
  return name === "" || name === "." || name === ".." || name.includes("/") || name.includes("\\") || name.includes("\0");
}

/** The tree at `baseCommit`, whole, in memory (bounded by the copy limits a case's repo/ must meet anyway). */
export async function readBaseTree(found: { dir: string; gitdir: string }, baseCommit: string, limits: TreeLimits): Promise<BaseTree> {
  const cfs = confinedFs(found.dir, { maxEntries: 2_000_000, deadline: limits.now() + limits.timeoutMs, now: limits.now });
  const gitdir = path.join(fs.realpathSync(found.dir), path.relative(found.dir, found.gitdir));
  const cache = {};
  const files = new Map<string, TreeFile>();
  const skipped: string[] = [];
  let bytes = 0;
  const stopped = () => {
    const why = cfs.stopped();
    return why === null
      ? null
      : new MiniAgentError(
          "too_large",
          why === "deadline" ? `reading the repository took over ${limits.timeoutMs / 1000} s` : "the repository has too many entries to read",
        );
  };
  let tree: string;
  try {
    tree = (await git.readCommit({ fs: cfs.client, gitdir, oid: baseCommit, cache })).commit.tree;
  } catch (err) {
    throw stopped() ?? new MiniAgentError("not_found", `base_commit ${baseCommit} is not in ${found.dir} (${(err as { code?: string }).code ?? "unreadable"})`);
  }
  const walk = async (oid: string, prefix: string): Promise<void> => {
    const entries = (await git.readTree({ fs: cfs.client, gitdir, oid, cache })).tree;
    for (const e of entries) {
      const rel = prefix === "" ? e.path : `${prefix}/${e.path}`;
      if (badName(e.path)) throw new MiniAgentError("invalid_fields", `the tree at ${baseCommit} names an unsafe path ${JSON.stringify(rel)}`);
      if (e.path.toLowerCase() === ".git") {
        skipped.push(`${rel}: repository metadata, never copied`);
        continue;
      }
      if (e.type === "tree") {
        await walk(e.oid, rel);
        continue;
      }
      if (e.mode === SUBMODULE || e.type === "commit") {
        skipped.push(`${rel}: a submodule (its content is another repository)`);
        continue;
      }
      if (e.mode === SYMLINK) {
        skipped.push(`${rel}: a symlink (symlinks never enter a workspace)`);
        continue;
      }
      const { blob } = await git.readBlob({ fs: cfs.client, gitdir, oid: e.oid, cache });
      bytes += blob.byteLength;
      if (files.size + 1 > limits.maxFiles || bytes > limits.maxBytes)
        throw new MiniAgentError(
          "too_large",
          `the tree at ${baseCommit} is larger than a case's repo/ may be (${limits.maxFiles} files, ${limits.maxBytes} bytes)`,
        );
      files.set(rel, { data: Buffer.from(blob), exec: e.mode === EXEC });
    }
  };
  try {
    await walk(tree, "");
  } catch (err) {
    if (err instanceof MiniAgentError) throw err;
    throw (
      stopped() ?? new MiniAgentError("not_found", `the tree at ${baseCommit} could not be read whole (${(err as { code?: string }).code ?? "unreadable"})`)
    );
  }
  return { files, skipped, repoDir: found.dir };
}
