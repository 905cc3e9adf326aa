import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { instanceIdFor } from "../daemon/src/config/state-dir.js";
import { EvalReport } from "../daemon/src/contracts/eval-report.js";
import { createDockerClient } from "../daemon/src/sandbox/docker-client.js";
import { INSTANCE_LABEL, labelFilter, POOL_PURPOSE, PURPOSE_LABEL } from "../daemon/src/sandbox/labels.js";
import { bin, built, machineCpu, requireFreshBins, pinImages, procKb, run, startDaemon, suiteDir } from "./bench-eval-kit.js";

/**
 * `npm run bench:eval [-- --suite DIR] [--image-lock FILE] [--levels 1,2,4]`
 * In ONE invocation: starts its own daemon (own state dir, images pinned from
 * --image-lock or the default state dir's lock when the engine has them, else
 * built), runs the suite with `eval run` at concurrency 1, 2 and 4 (a fresh
 * output folder each), and prints per level: cases per minute, p50/p95 case
 * time, the daemon's peak RSS (VmRSS sampled from /proc, VmHWM at the end),
 * the sandbox containers alive at peak (by the daemon's instance label) and
 * the leftovers after the level (must be 0; the pool's idle members are counted apart), and the
 * machine's busy cores over the level (/proc/stat); then c2/c1 throughput and the bound c1's busy
 * cores put on it (n cores / c1's busy cores).
 * Targets (reported, not asserted): c2 >= 1.6x c1, RSS < 200 MB, 0 leftovers.
 *
 * Suite: --suite, else `evals/` when it exists, else one case per built-in
 * fixture (its canonical replay, expected completed) assembled in a temp dir.
 * Bins: dist/ when built (what users run; RSS is then the daemon's own), else tsx.
 * Wall-clock ratios move with whatever else the machine runs; where the CPU of
 * a case goes (and the c2/c1 bound it allows) is `npm run bench:eval-cpu`.
 */
const SAMPLE_MS = 250;

interface Options {
  suite: string | null;
  imageLock: string | null;
  levels: number[];
}

function parseArgs(argv: string[]): Options {
  const o: Options = { suite: null, imageLock: null, levels: [1, 2, 4] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--suite") o.suite = path.resolve(argv[++i] ?? "");
    else if (a === "--image-lock") o.imageLock = path.resolve(argv[++i] ?? "");
    else if (a === "--levels") o.levels = (argv[++i] ?? "").split(",").map(Number);
    else throw new Error(`unknown option ${a}; use --suite DIR, --image-lock FILE, --levels 1,2,4`);
  }
  if (o.levels.some((n) => !Number.isInteger(n) || n < 1 || n > 16)) throw new Error("--levels: whole numbers from 1 to 16, comma separated");
  return o;
}

interface Level {
  concurrency: number;
  cases: number;
  passed: number;
  wall_s: number;
  cases_per_min: number;
  p50_s: number;
  p95_s: number;
  rss_peak_mb: number;
  containers_peak: number;
  leftovers: number;
  pool_idle: number;
  /** the machine's busy CPU over the level's wall time, in cores (/proc/stat: everything, this run or not) */
  cores_busy: number;
  exit_code: number;
}

async function main(argv: string[]): Promise<number> {
  const o = parseArgs(argv);
  requireFreshBins();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "ma-bench-eval-"));
  const docker = createDockerClient(process.env);
  let stop: (() => Promise<void>) | null = null;
  try {
    const suite = suiteDir(o.suite, root);
    const stateDir = path.join(root, "state");
    fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    await pinImages(docker, stateDir, o.imageLock);
    const d = await startDaemon(stateDir);
    stop = d.stop;
    const mine = { all: true, filters: { label: [labelFilter(INSTANCE_LABEL, instanceIdFor(stateDir))] } };
    const levels: Level[] = [];
    let rssPeakKb = 0;
    for (const concurrency of o.levels) {
      const out = path.join(root, `out-c${concurrency}`);
      let levelRssKb = 0;
      let containersPeak = 0;
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          const kb = procKb(d.pid, "VmRSS") ?? 0;
          levelRssKb = Math.max(levelRssKb, kb);
          containersPeak = Math.max(containersPeak, (await docker.listContainers(mine)).length);
          await new Promise((r) => setTimeout(r, SAMPLE_MS));
        }
      })();
      process.stderr.write(`eval run at concurrency ${concurrency}...\n`);
      const cpu0 = machineCpu().busy;
      const t0 = performance.now();
      const r = await run([...bin("client"), "eval", "run", suite, "--output", out, "--concurrency", String(concurrency), "--json", "--socket", d.socket]);
      const wallMs = performance.now() - t0;
      const coresBusy = (machineCpu().busy - cpu0) / (wallMs / 1000);
      sampling = false;
      await sampler;
      if (!fs.existsSync(path.join(out, "eval-report.json")))
        throw new Error(`eval run at concurrency ${concurrency} wrote no report (exit ${r.code}):\n${r.stderr}`);
      const report = EvalReport.parse(JSON.parse(fs.readFileSync(path.join(out, "eval-report.json"), "utf8")));
      rssPeakKb = Math.max(rssPeakKb, levelRssKb);
      const a = report.aggregates;
      levels.push({
        concurrency,
        cases: a.cases,
        passed: a.passed,
        wall_s: wallMs / 1000,
        cases_per_min: a.cases / (wallMs / 60_000),
        p50_s: a.wall_ms.p50 / 1000,
        p95_s: a.wall_ms.p95 / 1000,
        rss_peak_mb: levelRssKb / 1024,
        containers_peak: containersPeak,
        // every case's sandboxes are removed before its run reports an end; the daemon's sandbox pool
        // keeps idle, never-used members while it runs (drained when it stops): counted apart
        ...(await afterLevel(docker.listContainers(mine))),
        cores_busy: coresBusy,
        exit_code: r.code,
      });
    }
    const hwmKb = procKb(d.pid, "VmHWM");
    await d.stop();
    stop = null;
    const after = (await docker.listContainers(mine)).length;
    const c1 = levels.find((l) => l.concurrency === 1);
    const c2 = levels.find((l) => l.concurrency === 2);
    const ratio = c1 && c2 ? c2.cases_per_min / c1.cases_per_min : null;
    const f = (n: number, w: number, dp = 1) => n.toFixed(dp).padStart(w);
    process.stdout.write(
      [
        `bench:eval  suite ${suite} (${levels[0]?.cases ?? 0} cases), ${os.cpus().length} cores, bins from ${built ? "dist/" : "tsx (not built)"}`,
        "conc  cases  passed  wall s  cases/min  p50 s  p95 s  RSS peak MB  containers peak  leftovers  pool idle  cores busy",
        ...levels.map(
          (l) =>
            `${String(l.concurrency).padStart(4)}  ${String(l.cases).padStart(5)}  ${String(l.passed).padStart(6)}  ${f(l.wall_s, 6)}  ${f(l.cases_per_min, 9, 2)}  ${f(l.p50_s, 5)}  ${f(l.p95_s, 5)}  ${f(l.rss_peak_mb, 11)}  ${String(l.containers_peak).padStart(15)}  ${String(l.leftovers).padStart(9)}  ${String(l.pool_idle).padStart(9)}  ${f(l.cores_busy, 10, 2)}`,
        ),
        `daemon VmHWM at the end: ${hwmKb === null ? "unknown" : `${(hwmKb / 1024).toFixed(1)} MB`} (target < 200 MB)`,
        `c2/c1 throughput: ${ratio === null ? "n/a" : `${ratio.toFixed(2)}x`} (target >= 1.6x)`,
        // a level that already keeps k of the n cores busy can gain at most n/k from more concurrency
        ...(c1
          ? [
              `CPU bound: concurrency 1 kept ${c1.cores_busy.toFixed(2)} of ${os.cpus().length} cores busy, so any level can reach at most ${(os.cpus().length / c1.cores_busy).toFixed(2)}x its throughput`,
            ]
          : []),
        `leftover containers after the daemon stopped: ${after} (target 0)`,
        "",
        JSON.stringify({
          suite,
          built,
          levels,
          vm_hwm_mb: hwmKb === null ? null : hwmKb / 1024,
          rss_peak_mb: rssPeakKb / 1024,
          c2_over_c1: ratio,
          leftovers_after_stop: after,
        }),
        "",
      ].join("\n"),
    );
    return 0;
  } finally {
    if (stop) await stop().catch(() => undefined);
    fs.rmSync(root, { recursive: true, force: true });
  }
}

/** containers of this daemon after a level: leftovers of runs, and the pool's idle members */
async function afterLevel(list: Promise<Array<{ Labels: Record<string, string> }>>): Promise<{ leftovers: number; pool_idle: number }> {
  const all = await list;
  const pool = all.filter((c) => c.Labels[PURPOSE_LABEL] === POOL_PURPOSE).length;
  return { leftovers: all.length - pool, pool_idle: pool };
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench:eval: ${(err as Error).message}\n`);
    process.exit(1);
  },
);
