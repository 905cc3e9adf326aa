import fs from "node:fs";
import path from "node:path";
import git from "isomorphic-git";
import { confinedFs } from "./confined-fs.js";

/**
 * Files the user changed in a git worktree (modified, staged, deleted,
 * untracked and not ignored): they become part of the run's baseline, so the
 * user is told before the run starts. A warning only: no .git, a repository
 * that cannot be read, too many files, too slow: no list, never a failure.
 *
 * No git program runs. A repository's config, attributes, hooks and includes
 * can make `git status` run commands (a filter driver named `lfs=x` escaped
 * every `-c filter.<name>.clean=` override, since git splits `-c` at the first
 * `=`), so overriding them one by one can never be complete. Instead the
 * on-disk format is read as data by isomorphic-git (pure JS: it reads the
 * index, the HEAD tree and `.gitignore` files; it has no filters, hooks,
 * fsmonitor, pager or includes, and never starts a process), through a file
 * system that only reads and only below the workspace (confined-fs.ts).
 *
 * A `.git` that is a file (a linked worktree or a submodule) or a link names a
 * git directory elsewhere: it is not followed, and the user is told why there
 * is no list. Symlinks in the worktree are compared as links (their target
 * text), never followed.
 */
export interface DirtyState {
  files: string[];
  /** why there is no list although the folder has a .git (for the log and the user) */
  unavailable: string | null;
}

export interface GitStateLimits {
  /** give up after this long: drafting must not wait on a huge or slow tree */
  timeoutMs: number;
  /** give up after this many directory entries and stat calls */
  maxEntries: number;
  now: () => number;
}

export const GIT_STATE_LIMITS: GitStateLimits = { timeoutMs: 10_000, maxEntries: 200_000, now: () => Date.now() };

/** a statusMatrix row: [path, HEAD, workdir, stage]; [1, 1, 1] is unchanged */
type Row = [string, number, number, number];

function dotGitShape(workspace: string): "none" | "dir" | "file" | "link" | "other" {
  try {
    const st = fs.lstatSync(path.join(workspace, ".git"));
    if (st.isSymbolicLink()) return "link";
    if (st.isFile()) return "file";
    return st.isDirectory() ? "dir" : "other";
  } catch {
    return "none";
  }
}

export async function dirtyFiles(workspace: string, limits: GitStateLimits = GIT_STATE_LIMITS): Promise<DirtyState> {
  const shape = dotGitShape(workspace);
  if (shape === "none") return { files: [], unavailable: null };
  if (shape === "file")
    return { files: [], unavailable: ".git is a file naming a git directory elsewhere (a linked worktree or submodule); it is not followed" };
  if (shape === "link") return { files: [], unavailable: ".git is a symlink; it is not followed" };
  if (shape === "other") return { files: [], unavailable: ".git is not a folder" };

  if (indexVersion(workspace) === 4) return { files: [], unavailable: "its index is in git's format 4 (feature.manyFiles), which is not read here" };

  const cfs = confinedFs(workspace, { maxEntries: limits.maxEntries, deadline: limits.now() + limits.timeoutMs, now: limits.now });
  let rows: Row[];
  try {
    const dir = fs.realpathSync(workspace);
    rows = (await git.statusMatrix({ fs: cfs.client, dir, gitdir: path.join(dir, ".git"), refresh: false, cache: {} })) as Row[];
  } catch (err) {
    const why = cfs.stopped();
    if (why === null) return { files: [], unavailable: `its git data could not be read (${errorCode(err)})` };
    return { files: [], unavailable: limitReason(why, limits) };
  }
  // a walk cut short answers "not found" for the rest: its list would be wrong, so there is none
  const why = cfs.stopped();
  if (why !== null) return { files: [], unavailable: limitReason(why, limits) };
  const files = rows.filter(([, head, workdir, stage]) => !(head === 1 && workdir === 1 && stage === 1)).map(([file]) => file);
  return { files: [...new Set(files)].sort(), unavailable: null };
}

/** the index's format version, from its header (read only when it is a regular file); null when there is none */
function indexVersion(workspace: string): number | null {
  const file = path.join(workspace, ".git", "index");
  let fd: number | undefined;
  try {
    if (!fs.lstatSync(file).isFile()) return null;
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    const head = Buffer.alloc(8);
    if (fs.readSync(fd, head, 0, 8, 0) < 8 || head.toString("latin1", 0, 4) !== "DIRC") return null;
    return head.readUInt32BE(4);
  } catch {
    return null;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

function limitReason(why: "deadline" | "entries", limits: GitStateLimits): string {
  return why === "deadline" ? `reading it took over ${limits.timeoutMs / 1000} s` : `it has over ${limits.maxEntries} files and folders`;
}

function errorCode(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : "unreadable";
}
