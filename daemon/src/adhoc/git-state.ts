import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

/**
 * Files the user changed in a git worktree (modified, added, deleted,
 * untracked and not ignored): they become part of the run's baseline, so the
 * user is told before the run starts. A warning only: no git binary, no .git,
 * a repository git refuses, a timeout: no list, never a failure.
 *
 * The daemon never runs anything from the repository, and a repository's own
 * config can make `git status` run programs. So git runs with:
 * - `core.fsmonitor=false`: a hook path there runs on every status;
 * - `core.hooksPath=/dev/null` and `--no-optional-locks`: no index write, so no
 *   post-index-change hook;
 * - every filter driver the config names overridden to an empty command
 *   (`filter.<name>.clean=`, `.smudge=`, `.process=`): status runs the clean
 *   filter of a file whose stat data changed; git runs no filter whose command
 *   is empty. Attributes can only NAME a driver; the command comes from config,
 *   and command-line config beats the repository's;
 * - `--ignore-submodules=all`: a submodule has its own config;
 * - `--work-tree` set to the workspace: `core.worktree` cannot point it elsewhere;
 * - a fresh environment (no GIT_* from the daemon), a timeout and an output cap.
 */
export interface GitRunner {
  /** git with these arguments in `cwd`; never throws: a failure is `ok: false` */
  run(args: string[], cwd: string): Promise<{ ok: true; stdout: string } | { ok: false; reason: string }>;
}

export interface GitRunnerOptions {
  /** PATH to find git on (the daemon's, given by the entry point) */
  path: string;
  timeoutMs?: number;
}

export function execGitRunner(opts: GitRunnerOptions): GitRunner {
  const env = { PATH: opts.path, LC_ALL: "C", GIT_TERMINAL_PROMPT: "0", GIT_OPTIONAL_LOCKS: "0", HOME: "/nonexistent", GIT_CONFIG_NOSYSTEM: "1" };
  return {
    run: (args, cwd) =>
      new Promise((resolve) => {
        execFile("git", args, { cwd, env, timeout: opts.timeoutMs ?? 10_000, maxBuffer: 8 * 1024 * 1024, windowsHide: true }, (err, stdout) => {
          if (err) resolve({ ok: false, reason: (err as NodeJS.ErrnoException).code === "ENOENT" ? "git is not installed" : "git status failed" });
          else resolve({ ok: true, stdout: String(stdout) });
        });
      }),
  };
}

export interface DirtyState {
  files: string[];
  /** why there is no list although the folder has a .git (for the log and the user) */
  unavailable: string | null;
}

const FILTER_KEY = /^filter\.(.+)\.(clean|smudge|process|required)$/i;

/** The filter driver names the repository's config defines (read as data, never run). */
async function filterDrivers(git: GitRunner, ws: string): Promise<string[] | null> {
  const r = await git.run(["--no-optional-locks", "config", "-z", "--list"], ws);
  if (!r.ok) return null;
  const names = new Set<string>();
  for (const entry of r.stdout.split("\0")) {
    const key = entry.split("\n")[0] ?? "";
    const m = FILTER_KEY.exec(key);
    if (m) names.add(m[1]!);
  }
  return [...names];
}

export async function dirtyFiles(git: GitRunner, workspace: string): Promise<DirtyState> {
  try {
    fs.lstatSync(path.join(workspace, ".git"));
  } catch {
    return { files: [], unavailable: null };
  }
  const drivers = await filterDrivers(git, workspace);
  if (drivers === null) return { files: [], unavailable: "git could not read this repository" };
  const neutral = drivers.flatMap((d) => [
    "-c",
    `filter.${d}.clean=`,
    "-c",
    `filter.${d}.smudge=`,
    "-c",
    `filter.${d}.process=`,
    "-c",
    `filter.${d}.required=false`,
  ]);
  const args = [
    "--no-optional-locks",
    `--work-tree=${workspace}`,
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.untrackedCache=false",
    ...neutral,
    "status",
    "--porcelain=v1",
    "-z",
    "--untracked-files=all",
    "--no-renames",
    "--ignore-submodules=all",
  ];
  const r = await git.run(args, workspace);
  if (!r.ok) return { files: [], unavailable: r.reason };
  // porcelain v1 -z: "XY PATH\0" per entry; without renames there is no second path
  const files = r.stdout
    .split("\0")
    .filter((e) => e.length > 3)
    .map((e) => e.slice(3));
  return { files: [...new Set(files)].sort(), unavailable: null };
}
