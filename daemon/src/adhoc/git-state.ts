import fs from "node:fs";
import path from "node:path";
import { Worker } from "node:worker_threads";

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
 * on-disk format is read as data (git-status.ts: our own index reader, HEAD's
 * tree through isomorphic-git's object reader, the `.gitignore` rules; no
 * filters, hooks, fsmonitor, pager or includes, and no process is started),
 * through a file system that only reads and only below the workspace
 * (confined-fs.ts). The read runs in a worker thread: a 10,000-file
 * repository blocked the daemon's event loop for seconds when it ran inline.
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
  let dir: string;
  try {
    dir = fs.realpathSync(workspace);
  } catch (err) {
    return { files: [], unavailable: `its git data could not be read (${errorCode(err)})` };
  }
  return offThread(dir, limits);
}

type WorkerReply = { result: DirtyState } | { failed: string };

/**
 * One worker thread per read. The time bound is kept here, on the caller's
 * clock: past it the worker is terminated (which stops it even inside a long
 * loop) and the draft goes on without a list.
 */
function offThread(dir: string, limits: GitStateLimits): Promise<DirtyState> {
  const deadline = limits.now() + limits.timeoutMs;
  const worker = startWorker({ workspace: dir, maxEntries: limits.maxEntries });
  return new Promise<DirtyState>((resolve) => {
    let settled = false;
    const finish = (state: DirtyState) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void worker.terminate();
      resolve(state);
    };
    const watch = () => {
      if (limits.now() > deadline) finish({ files: [], unavailable: `reading it took over ${limits.timeoutMs / 1000} s` });
      else timer = setTimeout(watch, Math.max(1, Math.min(WATCH_MS, deadline - limits.now() + 1)));
    };
    let timer = setTimeout(watch, Math.max(1, Math.min(WATCH_MS, limits.timeoutMs + 1)));
    worker.on("message", (m: WorkerReply) => finish("result" in m ? m.result : { files: [], unavailable: `its git data could not be read (${m.failed})` }));
    worker.on("error", (err) => finish({ files: [], unavailable: `its git data could not be read (${errorCode(err)})` }));
    worker.on("exit", () => finish({ files: [], unavailable: "its git data could not be read (the reader stopped)" }));
  });
}

/** how often the caller's clock is looked at while the worker reads */
const WATCH_MS = 100;

/**
 * Built code starts the compiled worker file; from source (tests, tsx) the
 * worker gets the TypeScript loader first, since a worker does not inherit it.
 */
function startWorker(data: { workspace: string; maxEntries: number }): Worker {
  // a hostile index or tree must not grow the daemon without bound: the worker's heap is capped
  const options = { workerData: data, resourceLimits: { maxOldGenerationSizeMb: 256 } };
  if (!import.meta.url.endsWith(".ts")) return new Worker(new URL("./git-state-worker.js", import.meta.url), options);
  const tsx = import.meta.resolve("tsx/esm/api");
  const entry = new URL("./git-state-worker.ts", import.meta.url).href;
  const code = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); })`;
  return new Worker(code, { ...options, eval: true });
}

function errorCode(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : "unreadable";
}
