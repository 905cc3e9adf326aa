import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { built, REPO, requireFreshBins } from "./bench-eval-kit.js";

/**
 * `npm run bench:git-state [-- --files N] [--runs R]`
 * The dirty-worktree list a draft shows, read as data (never by running git),
 * against `git status --porcelain` on the same repository: a repository of N
 * small files made with the real git, with one file modified, one staged, one
 * deleted, one untracked and ignored files beside them. Prints the median of R
 * reads of each, their ratio, whether the two lists agree, and the largest
 * event-loop delay this process saw during a read (the read runs in a worker
 * thread; the daemon awaits exactly this call while drafting).
 * Uses the built code (dist/) when present, as the daemon runs it.
 * Prints medians; never a timed test.
 */
function parseArgs(argv: string[]) {
  const o = { files: 10_000, runs: 5 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const n = () => Number(argv[++i]);
    if (a === "--files") o.files = n();
    else if (a === "--runs") o.runs = n();
    else throw new Error(`unknown option ${a}; use --files N, --runs R`);
  }
  for (const k of ["files", "runs"] as const) if (!Number.isInteger(o[k]) || o[k] < 1) throw new Error(`--${k} must be a positive integer`);
  return o;
}

const GIT_ENV = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: "/nonexistent", GIT_CONFIG_NOSYSTEM: "1" };
const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.email=b@b", "-c", "user.name=b", ...args], { cwd, env: GIT_ENV, stdio: "pipe", maxBuffer: 1 << 28 }).toString();

function makeRepo(files: number): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "mini-agent-bench-git-state-"));
  fs.writeFileSync(path.join(root, ".gitignore"), "*.log\ncache/\n");
  for (let i = 0; i < files; i++) {
    const dir = path.join(root, `pkg${i % 50}`, `mod${Math.floor(i / 50) % 20}`);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, `f${i}.js`), `export const v${i} = ${i};\n`);
  }
  git(root, "init", "-q");
  git(root, "add", "-A");
  git(root, "commit", "-qm", "bench");
  fs.writeFileSync(path.join(root, "pkg1/mod0/f1.js"), "changed\n");
  fs.writeFileSync(path.join(root, "pkg2/mod0/f2.js"), "staged\n");
  git(root, "add", "pkg2/mod0/f2.js");
  fs.rmSync(path.join(root, "pkg3/mod0/f3.js"));
  fs.writeFileSync(path.join(root, "untracked.js"), "u\n");
  fs.writeFileSync(path.join(root, "debug.log"), "");
  fs.mkdirSync(path.join(root, "cache"));
  fs.writeFileSync(path.join(root, "cache/x.js"), "");
  return root;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  requireFreshBins();
  const from = built ? path.join(REPO, "dist/daemon/src/adhoc/git-state.js") : path.join(REPO, "daemon/src/adhoc/git-state.ts");
  const { dirtyFiles } = (await import(from)) as typeof import("../daemon/src/adhoc/git-state.js");
  const repo = makeRepo(o.files);
  try {
    const ours: number[] = [];
    const theirs: number[] = [];
    let maxDelayMs = 0;
    let same = true;
    let unavailable: string | null = null;
    for (let r = 0; r < o.runs; r++) {
      const delay = monitorEventLoopDelay({ resolution: 10 });
      delay.enable();
      let t = performance.now();
      const d = await dirtyFiles(repo);
      ours.push(performance.now() - t);
      delay.disable();
      maxDelayMs = Math.max(maxDelayMs, delay.max / 1e6);
      unavailable ??= d.unavailable;
      t = performance.now();
      const out = git(repo, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames");
      theirs.push(performance.now() - t);
      const listed = out
        .split("\0")
        .filter((e) => e.length > 3)
        .map((e) => e.slice(3))
        .sort();
      if (JSON.stringify(listed) !== JSON.stringify(d.files)) same = false;
    }
    const a = median(ours);
    const b = median(theirs);
    process.stdout.write(`${o.files} files, medians of ${o.runs} run(s), code: ${built ? "dist/" : "sources through tsx"}\n`);
    process.stdout.write(`  dirty list read as data (worker thread): ${a.toFixed(0)} ms${unavailable ? ` (no list: ${unavailable})` : ""}\n`);
    process.stdout.write(`  git status --porcelain:                  ${b.toFixed(0)} ms\n`);
    process.stdout.write(`  ratio: ${(a / b).toFixed(1)}x; same list as git: ${same ? "yes" : "NO"}\n`);
    process.stdout.write(`  max event-loop delay in this process during a read: ${maxDelayMs.toFixed(0)} ms\n`);
  } finally {
    fs.rmSync(repo, { recursive: true, force: true, maxRetries: 3 });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
