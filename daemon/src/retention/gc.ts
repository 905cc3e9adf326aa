/**
 * `mini-agent-client gc`: what a finished run leaves in the state dir (its
 * baseline copy and control assets, its trace file, its live run records, an
 * orchestrator's saved pause) and the baseline test results nobody used lately,
 * removed by age and count. A state dir grew by a full workspace copy per run.
 *
 * Only runs that can never run again: completed, failed, cancelled. A run that
 * can be resumed (interrupted, budget_exhausted, awaiting_approval) or must be
 * inspected (uncertain) keeps everything. The ledger's rows stay: `status` and
 * `list` still know the run; what needed its files (`diff`, `trace --file`,
 * `eval capture`) says the files are gone.
 */
import fs from "node:fs/promises";
import path from "node:path";
import type { RunStatus } from "../contracts/run.js";
import { statePath } from "../config/state-dir.js";
import type { RunRow } from "../store/ledger.js";
import { measureTree } from "../workspace/index.js";

const COLLECTABLE: readonly RunStatus[] = ["completed", "failed", "cancelled"];

export interface GcOptions {
  olderThanMs: number;
  keep: number;
  dryRun: boolean;
}

export interface GcRunRemoved {
  run_id: string;
  status: RunStatus;
  bytes: number;
}

export interface GcResult {
  dry_run: boolean;
  older_than_ms: number;
  keep: number;
  runs: GcRunRemoved[];
  /** cached baseline test results not used within the window */
  baseline_results: number;
  bytes_freed: number;
  /** finished runs whose files were kept (too new, or among the newest `keep`) */
  kept_finished: number;
  /** runs that can still run or must be inspected: never touched */
  kept_open: number;
}

export interface GcDeps {
  stateDir: string;
  runs(): RunRow[];
  now(): number;
}

/** Apparent bytes of a file or a whole folder (workspace/tree-size.ts walks it: one way to count a tree in the daemon). */
async function sizeOf(p: string): Promise<number> {
  let st: import("node:fs").Stats;
  try {
    st = await fs.lstat(p);
  } catch {
    return 0;
  }
  if (!st.isDirectory()) return st.isFile() ? st.size : 0;
  return (await measureTree(p).catch(() => ({ bytes: 0 }))).bytes;
}

async function mtimeMs(p: string): Promise<number | null> {
  try {
    return (await fs.stat(p)).mtimeMs;
  } catch {
    return null;
  }
}

/** Is `child` inside `parent` (never the parent itself)? gc removes nothing outside the state dir. */
function inside(child: string, parent: string): boolean {
  const r = path.relative(parent, child);
  return r !== "" && !r.startsWith("..") && !path.isAbsolute(r);
}

/** Everything of one run's in the state dir, that exists. */
async function filesOf(stateDir: string, run: RunRow): Promise<string[]> {
  const out: string[] = [];
  const control = path.resolve(run.record.control_dir);
  if (inside(control, statePath(stateDir, "controlRoot"))) out.push(control);
  out.push(path.join(statePath(stateDir, "traces"), `${run.run_id}.jsonl`));
  out.push(path.join(statePath(stateDir, "orchestrators"), "agents-sdk", `${run.run_id}.json`));
  const live = statePath(stateDir, "liveRuns");
  for (const name of await fs.readdir(live).catch(() => [] as string[])) if (name.startsWith(`${run.run_id}.`)) out.push(path.join(live, name));
  const present: string[] = [];
  for (const p of out) if ((await mtimeMs(p)) !== null) present.push(p);
  return present;
}

/** When the run last changed anything: its trace file's last write, else its creation. */
async function finishedAt(stateDir: string, run: RunRow): Promise<number> {
  return (await mtimeMs(path.join(statePath(stateDir, "traces"), `${run.run_id}.jsonl`))) ?? run.created_at;
}

export async function collectGarbage(deps: GcDeps, opts: GcOptions): Promise<GcResult> {
  const cutoff = deps.now() - opts.olderThanMs;
  const all = deps.runs();
  const finished = all.filter((r) => COLLECTABLE.includes(r.status));
  const dated = await Promise.all(finished.map(async (r) => ({ run: r, at: await finishedAt(deps.stateDir, r) })));
  // newest first: the first `keep` stay whatever their age
  dated.sort((a, b) => b.at - a.at || b.run.created_at - a.run.created_at);
  const result: GcResult = {
    dry_run: opts.dryRun,
    older_than_ms: opts.olderThanMs,
    keep: opts.keep,
    runs: [],
    baseline_results: 0,
    bytes_freed: 0,
    kept_finished: 0,
    kept_open: all.length - finished.length,
  };
  for (const [i, { run, at }] of dated.entries()) {
    if (i < opts.keep || at > cutoff) {
      result.kept_finished += 1;
      continue;
    }
    const files = await filesOf(deps.stateDir, run);
    if (files.length === 0) continue;
    let bytes = 0;
    for (const f of files) bytes += await sizeOf(f);
    if (!opts.dryRun) for (const f of files) await fs.rm(f, { recursive: true, force: true });
    result.runs.push({ run_id: run.run_id, status: run.status, bytes });
    result.bytes_freed += bytes;
  }
  // a cached baseline result is rebuilt by the next run that needs it: kept only while recently used
  const cache = statePath(deps.stateDir, "baselineTests");
  for (const name of await fs.readdir(cache).catch(() => [] as string[])) {
    const p = path.join(cache, name);
    const at = await mtimeMs(p);
    if (at === null || at > cutoff) continue;
    result.baseline_results += 1;
    result.bytes_freed += await sizeOf(p);
    if (!opts.dryRun) await fs.rm(p, { force: true });
  }
  return result;
}

/** The state dir's whole size in bytes (health), or null when it cannot be read. */
export async function stateDirBytes(stateDir: string): Promise<number | null> {
  try {
    await fs.access(stateDir);
  } catch {
    return null;
  }
  return sizeOf(stateDir);
}
