import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { instanceIdFor, resolveStateDir, statePath } from "../daemon/src/config/state-dir.js";
import { EvalReport } from "../daemon/src/contracts/eval-report.js";
import { createDockerClient } from "../daemon/src/sandbox/docker-client.js";
import { INSTANCE_LABEL, labelFilter, POOL_PURPOSE, PURPOSE_LABEL } from "../daemon/src/sandbox/labels.js";
import type { ImageFamily } from "../sandbox-image/definitions.js";
import { pinFamilyImage } from "../sandbox-image/pin-image.js";

/**
 * `npm run bench:eval [-- --suite DIR] [--image-lock FILE] [--levels 1,2,4]`
 * In ONE invocation: starts its own daemon (own state dir, images pinned from
 * --image-lock or the default state dir's lock when the engine has them, else
 * built), runs the suite with `eval run` at concurrency 1, 2 and 4 (a fresh
 * output folder each), and prints per level: cases per minute, p50/p95 case
 * time, the daemon's peak RSS (VmRSS sampled from /proc, VmHWM at the end),
 * the sandbox containers alive at peak (by the daemon's instance label) and
 * the leftovers after the level (must be 0; the pool's idle members are counted apart); then c2/c1 throughput.
 * Targets (reported, not asserted): c2 >= 1.6x c1, RSS < 200 MB, 0 leftovers.
 *
 * Suite: --suite, else `evals/` when it exists, else one case per built-in
 * fixture (its canonical replay, expected completed) assembled in a temp dir.
 * Bins: dist/ when built (what users run; RSS is then the daemon's own), else tsx.
 */
const REPO = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const FIXTURES: Array<{ name: string; family: ImageFamily }> = [
  { name: "linkcheck", family: "node" },
  { name: "semverlite", family: "python" },
  { name: "wordwrap", family: "go" },
];
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

const built = fs.existsSync(path.join(REPO, "dist/daemon/src/cli.js")) && fs.existsSync(path.join(REPO, "dist/client/src/cli.js"));
const bin = (which: "daemon" | "client") =>
  built ? [path.join(REPO, `dist/${which}/src/cli.js`)] : ["--import", "tsx", path.join(REPO, `${which}/src/cli.ts`)];
const ENV = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: process.env.HOME ?? "/root",
  NO_COLOR: "1",
  ...(process.env.DOCKER_HOST && { DOCKER_HOST: process.env.DOCKER_HOST }),
};

function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, args, { cwd: REPO, env: ENV, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    p.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    p.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    p.on("error", reject);
    p.on("exit", (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

async function startDaemon(stateDir: string) {
  const p = spawn(process.execPath, [...bin("daemon"), "--state-dir", stateDir], { cwd: REPO, env: ENV, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  p.stdout.on("data", (d: Buffer) => (out += d.toString()));
  p.stderr.on("data", (d: Buffer) => (out += d.toString()));
  const deadline = Date.now() + 120_000;
  for (;;) {
    const m = /mini-agent-daemon ready pid=(\d+) socket=(\S+)/.exec(out);
    if (m) {
      const stop = () => new Promise<void>((r) => (p.exitCode !== null || p.signalCode !== null ? r() : (p.once("exit", () => r()), p.kill("SIGTERM"))));
      return { pid: Number(m[1]), socket: m[2]!, stop };
    }
    if (p.exitCode !== null || Date.now() > deadline) throw new Error(`daemon did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** VmRSS / VmHWM of a process in kB, from /proc (Linux); null when unreadable. */
function procKb(pid: number, field: "VmRSS" | "VmHWM"): number | null {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** One case per built-in fixture: its canonical replay, expected completed. */
function fixtureSuite(root: string): string {
  const suite = path.join(root, "fixture-suite");
  for (const f of FIXTURES) {
    const dir = path.join(suite, `${f.name}-canonical`);
    fs.mkdirSync(dir, { recursive: true });
    for (const part of ["repo", "task.json", "control", "replay.json"]) {
      const src = path.join(REPO, "fixtures", f.name, part);
      if (fs.existsSync(src)) fs.cpSync(src, path.join(dir, part), { recursive: true });
    }
    fs.writeFileSync(path.join(dir, "expect.json"), JSON.stringify({ schema_version: 1, status: "completed" }));
  }
  return suite;
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
  exit_code: number;
}

async function main(argv: string[]): Promise<number> {
  const o = parseArgs(argv);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "ma-bench-eval-"));
  const docker = createDockerClient(process.env);
  let stop: (() => Promise<void>) | null = null;
  try {
    const suite = o.suite ?? (fs.existsSync(path.join(REPO, "evals")) ? path.join(REPO, "evals") : fixtureSuite(root));
    const stateDir = path.join(root, "state");
    fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    const sourceLock = o.imageLock ?? statePath(resolveStateDir(process.env), "imageLock");
    for (const { family } of FIXTURES)
      await pinFamilyImage(docker, statePath(stateDir, "imageLock"), family, sourceLock, (f) => process.stderr.write(`building the ${f} image...\n`));
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
      const t0 = performance.now();
      const r = await run([...bin("client"), "eval", "run", suite, "--output", out, "--concurrency", String(concurrency), "--json", "--socket", d.socket]);
      const wallMs = performance.now() - t0;
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
        "conc  cases  passed  wall s  cases/min  p50 s  p95 s  RSS peak MB  containers peak  leftovers  pool idle",
        ...levels.map(
          (l) =>
            `${String(l.concurrency).padStart(4)}  ${String(l.cases).padStart(5)}  ${String(l.passed).padStart(6)}  ${f(l.wall_s, 6)}  ${f(l.cases_per_min, 9, 2)}  ${f(l.p50_s, 5)}  ${f(l.p95_s, 5)}  ${f(l.rss_peak_mb, 11)}  ${String(l.containers_peak).padStart(15)}  ${String(l.leftovers).padStart(9)}  ${String(l.pool_idle).padStart(9)}`,
        ),
        `daemon VmHWM at the end: ${hwmKb === null ? "unknown" : `${(hwmKb / 1024).toFixed(1)} MB`} (target < 200 MB)`,
        `c2/c1 throughput: ${ratio === null ? "n/a" : `${ratio.toFixed(2)}x`} (target >= 1.6x)`,
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
