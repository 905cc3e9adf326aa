import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import picomatch from "picomatch";
import { resolveStateDir, statePath } from "../daemon/src/config/state-dir.js";
import { createDockerClient } from "../daemon/src/sandbox/docker-client.js";
import { DockerExecutor } from "../daemon/src/sandbox/docker-executor.js";
import { isMiniAgentError } from "../daemon/src/errors.js";
import { IMAGE_FAMILIES } from "../daemon/src/contracts/sandbox.js";
import { SANDBOX_USER } from "../daemon/src/sandbox/host-config.js";
import { seccompProfile } from "../daemon/src/sandbox/seccomp-profile.js";
import { SandboxPool } from "../daemon/src/sandbox/sandbox-pool.js";

/**
 * `npm run bench:sandbox [-- --runs N] [--runtime runc|runsc] [--family NAME]... (a built-in family) [--state-dir DIR]`
 * In ONE run, the median wall time of the same test command as: a host
 * process, a warm exec (per-run sandbox: sync + exec + leftover kill), a fresh
 * container via the Engine API (what the Verifier did before the pool), a
 * pooled fresh run (a never-used member of the sandbox pool, what the Verifier
 * uses now), and `docker run --rm` via the CLI. Targets: warm <= 1.3x host;
 * fresh API <= CLI; pooled <= 0.5x CLI. Each family runs
 * its own test command (the candidate preset of its fixture: node --test on
 * linkcheck, pytest on semverlite, go test on wordwrap) in its own image; with
 * several --family options they are measured one after the other and printed
 * side by side. A benchmark that prints numbers, never a timed test.
 */
const REPO = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");

type Family = (typeof IMAGE_FAMILIES)[number];
/** the fixture whose candidate preset is each family's workload */
const FIXTURE_OF: Record<Family, string> = { node: "linkcheck", python: "semverlite", go: "wordwrap" };

function parseArgs(argv: string[]) {
  const o = {
    runs: 10,
    runtime: "runc" as "runc" | "runsc",
    stateDir: undefined as string | undefined,
    cpus: undefined as number | undefined,
    families: [] as Family[],
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--runs") o.runs = Number(argv[++i]);
    else if (a === "--runtime") o.runtime = argv[++i] as "runc" | "runsc";
    else if (a === "--state-dir") o.stateDir = argv[++i];
    else if (a === "--cpus") o.cpus = Number(argv[++i]);
    else if (a === "--family") {
      const f = argv[++i];
      if (!(IMAGE_FAMILIES as readonly string[]).includes(f ?? "")) throw new Error(`--family must be one of ${IMAGE_FAMILIES.join(", ")}`);
      if (!o.families.includes(f as Family)) o.families.push(f as Family);
    } else throw new Error(`unknown option ${a}; use --runs N, --runtime runc|runsc, --family ${IMAGE_FAMILIES.join("|")}, --cpus N, --state-dir DIR`);
  }
  if (!Number.isInteger(o.runs) || o.runs < 1) throw new Error("--runs must be a positive integer");
  if (o.runtime !== "runc" && o.runtime !== "runsc") throw new Error("--runtime must be runc or runsc");
  if (o.cpus !== undefined && !(o.cpus > 0)) throw new Error("--cpus must be a positive number");
  if (o.families.length === 0) o.families.push("node");
  return o;
}

interface Workload {
  dir: string;
  argv: string[];
  /** the same command for the host process: a report path in the sandbox's /tmp moves to a private temp dir */
  hostArgv: string[];
  /** the host process's environment: what the family's image sets, with caches in the bench's temp dir (kept between rounds, like a developer's machine) */
  hostEnv: NodeJS.ProcessEnv;
  /** go: the same with an EMPTY build cache each call, which is what every sandbox run starts from */
  hostColdEnv?: () => NodeJS.ProcessEnv;
  label: string;
  cleanup: () => void;
}

/** The family's fixture's candidate preset when present, else (node only) a tiny built-in node:test file. */
function workload(family: Family): Workload {
  const fixture = path.join(REPO, "fixtures", FIXTURE_OF[family]);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "mini-agent-bench-"));
  // readable by uid 65534: the CLI baseline bind-mounts it
  fs.chmodSync(tmp, 0o755);
  const hostTmp = fs.mkdtempSync(path.join(os.tmpdir(), "mini-agent-bench-host-"));
  const cleanup = () => {
    fs.rmSync(tmp, { recursive: true, force: true });
    fs.rmSync(hostTmp, { recursive: true, force: true });
  };
  const hostEnv: NodeJS.ProcessEnv = { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: hostTmp };
  if (family === "python") Object.assign(hostEnv, { PYTHONDONTWRITEBYTECODE: "1", PYTHONPYCACHEPREFIX: path.join(hostTmp, "pycache") });
  if (family === "go") {
    Object.assign(hostEnv, {
      GOCACHE: path.join(hostTmp, "go-cache"),
      GOPATH: path.join(hostTmp, "go"),
      GOPROXY: "off",
      GOSUMDB: "off",
      // -count=1: the host would otherwise answer from its cached test results and run nothing
      GOFLAGS: "-buildvcs=false -count=1",
      CGO_ENABLED: "0",
    });
  }
  const toHost = (argv: string[]) => argv.map((a) => a.replace(/(^|=)\/tmp\//, `$1${hostTmp}/`));
  if (fs.existsSync(path.join(fixture, "repo"))) {
    fs.cpSync(path.join(fixture, "repo"), tmp, { recursive: true, verbatimSymlinks: true });
    const task = JSON.parse(fs.readFileSync(path.join(fixture, "task.json"), "utf8"));
    const preset = task.test_presets[task.verify_preset];
    const isMatch = picomatch(preset.files as string[]);
    const files = (fs.readdirSync(tmp, { recursive: true }) as string[]).filter((f) => isMatch(f)).sort();
    const argv = [...preset.command, ...files];
    let cold = 0;
    const hostColdEnv = () => ({ ...hostEnv, GOCACHE: path.join(hostTmp, `go-cache-cold-${cold++}`) });
    return {
      dir: tmp,
      argv,
      hostArgv: toHost(argv),
      hostEnv,
      ...(family === "go" && { hostColdEnv }),
      label: `fixtures/${FIXTURE_OF[family]} (candidate preset)`,
      cleanup,
    };
  }
  if (family !== "node") throw new Error(`fixtures/${FIXTURE_OF[family]} is missing: the ${family} workload is its candidate preset`);
  fs.writeFileSync(
    path.join(tmp, "t.test.mjs"),
    "import test from 'node:test';\nimport assert from 'node:assert';\ntest('adds', () => assert.equal(1 + 1, 2));\n",
  );
  const argv = ["node", "--test", "t.test.mjs"];
  return { dir: tmp, argv, hostArgv: argv, hostEnv, label: "built-in node:test file", cleanup };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

async function time(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

function hostRun(w: Workload, env: NodeJS.ProcessEnv = w.hostEnv): Promise<number | null> {
  return new Promise((resolve) => {
    const c = spawn(w.hostArgv[0] === "node" ? process.execPath : w.hostArgv[0]!, w.hostArgv.slice(1), { cwd: w.dir, env, stdio: "ignore" });
    c.on("close", resolve);
  });
}

async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const o = parseArgs(argv);
  const stateDir = resolveStateDir(env, o.stateDir);
  const docker = createDockerClient(env);
  const results: Record<string, unknown>[] = [];
  for (const family of o.families) results.push(await benchFamily(family, o, stateDir, docker));
  const printed = results.length === 1 ? results[0] : { side_by_side: sideBySide(results), families: results };
  process.stdout.write(JSON.stringify(printed, null, 2) + "\n");
  return 0;
}

/** One line per family: medians and ratios next to each other. */
function sideBySide(results: Record<string, unknown>[]) {
  return Object.fromEntries(results.map((r) => [r.family as string, { median_ms: r.median_ms, ratios: r.ratios }]));
}

async function benchFamily(family: Family, o: ReturnType<typeof parseArgs>, stateDir: string, docker: ReturnType<typeof createDockerClient>) {
  const ex = new DockerExecutor({
    lockPath: statePath(stateDir, "imageLock"),
    config: { runtime: o.runtime, imageFamily: family, ...(o.cpus ? { nanoCpus: Math.round(o.cpus * 1e9) } : {}) },
    docker,
  });
  const digest = await ex.pinnedDigest();
  // the same executor config with a pool, as the daemon wires it
  const pool = new SandboxPool({ docker, size: 1 });
  const pooledEx = new DockerExecutor({ lockPath: statePath(stateDir, "imageLock"), config: ex.config, docker, pool });
  const poolReq = { config: pooledEx.config, digest, withControl: false };
  let poolHits = 0;
  const w = workload(family);
  const req = { purpose: "bench" as const, argv: w.argv, workspaceDir: w.dir, timeoutMs: 120_000 };
  const samples: Record<string, number[]> = { host: [], warm: [], fresh: [], pooled: [], cli: [] };
  // where a fresh and a pooled run spend their time, step by step (docker-executor.ts FreshRunStep)
  const steps: Record<"fresh" | "pooled", Record<string, number[]>> = { fresh: {}, pooled: {} };
  const stepHook = (kind: "fresh" | "pooled") => ({
    onStep: (name: string, ms: number) => void (steps[kind][name] ??= []).push(ms),
  });
  const cleanups: Array<() => void> = [];
  const session = await ex.openSession("bench-warm");
  try {
    // one untimed round first: page cache, image layers, the engine's own warm-up
    const check = await session.exec(req);
    if (check.exit_code !== 0) throw new Error(`the workload fails in the sandbox (exit ${check.exit_code}): ${check.stderr.slice(0, 400)}`);
    if ((await hostRun(w)) !== 0) throw new Error(`the workload fails on the host (${w.hostArgv.join(" ")}); is the ${family} toolchain installed?`);
    await ex.run({ ...req, runId: "bench-fresh" });
    await pooledEx.run({ ...req, runId: "bench-pooled" });
    // the same isolation as the sandbox, as CLI flags (the seccomp profile too: gVisor needs ours)
    const c = ex.config;
    const profile = path.join(w.dir, "..", `${path.basename(w.dir)}-seccomp.json`);
    fs.writeFileSync(profile, JSON.stringify(seccompProfile(c.runtime)));
    const cliArgs = [
      "run",
      "--rm",
      "--network",
      "none",
      "--read-only",
      "--user",
      SANDBOX_USER,
      "--runtime",
      o.runtime,
      "--cpus",
      String(c.nanoCpus / 1e9),
      "--memory",
      String(c.memoryBytes),
      "--memory-swap",
      String(c.memoryBytes),
      "--pids-limit",
      String(c.pidsLimit),
      "--cap-drop",
      "ALL",
      "--security-opt",
      "no-new-privileges",
      "--security-opt",
      `seccomp=${profile}`,
      "--ipc",
      "none",
      "--init",
      "--log-driver",
      "none",
      "--tmpfs",
      `/tmp:rw,nosuid,nodev,${c.tmpExec ? "exec" : "noexec"},size=${c.tmpfsBytes},mode=1777`,
      "-v",
      `${w.dir}:/workspace:ro`,
      "-w",
      "/workspace",
      digest,
      ...w.argv,
    ];
    const cli = spawnSync("docker", cliArgs, { encoding: "utf8" });
    const haveCli = cli.status === 0;
    const cliProblem = cli.error ? cli.error.message : `exit ${cli.status}: ${(cli.stderr ?? "").trim().slice(0, 300)}`;
    cleanups.push(() => fs.rmSync(profile, { force: true }));
    for (let i = 0; i < o.runs; i++) {
      samples.host!.push(await time(() => hostRun(w)));
      const coldEnv = w.hostColdEnv?.();
      if (coldEnv) (samples.host_cold ??= []).push(await time(() => hostRun(w, coldEnv)));
      samples.warm!.push(await time(() => session.exec(req)));
      samples.fresh!.push(await time(() => ex.runFresh({ ...req, runId: "bench-fresh" }, stepHook("fresh"))));
      // steady state between runs: the previous member is removed and the pool is full again (both untimed:
      // they happen after a run, off its path); a run that still found it empty would count as a miss
      await pool.whenRetired();
      if ((await pool.whenFilled(poolReq)) > 0) poolHits++;
      samples.pooled!.push(await time(() => pooledEx.runFresh({ ...req, runId: "bench-pooled" }, stepHook("pooled"))));
      await pool.whenRetired();
      if (haveCli) samples.cli!.push(await time(() => new Promise((r) => spawn("docker", cliArgs, { stdio: "ignore" }).on("close", r))));
    }
    const m = Object.fromEntries(
      Object.entries(samples)
        .filter(([, v]) => v.length)
        .map(([k, v]) => [k, Math.round(median(v))]),
    );
    const stepMedians = (kind: "fresh" | "pooled") => Object.fromEntries(Object.entries(steps[kind]).map(([k, v]) => [k, Math.round(median(v))]));
    return {
      family,
      workload: w.label,
      argv: w.argv,
      runtime: o.runtime,
      sandbox_cpus: ex.config.nanoCpus / 1e9,
      runs: o.runs,
      median_ms: m,
      fresh_steps_ms: stepMedians("fresh"),
      pooled_steps_ms: stepMedians("pooled"),
      ratios: {
        warm_over_host: +(m.warm! / m.host!).toFixed(2),
        ...(m.host_cold && { warm_over_host_cold: +(m.warm! / m.host_cold).toFixed(2) }),
        fresh_over_cli: m.cli ? +(m.fresh! / m.cli).toFixed(2) : null,
        fresh_over_host: +(m.fresh! / m.host!).toFixed(2),
        pooled_over_cli: m.cli ? +(m.pooled! / m.cli).toFixed(2) : null,
        pooled_over_fresh: +(m.pooled! / m.fresh!).toFixed(2),
        pooled_over_host: +(m.pooled! / m.host!).toFixed(2),
      },
      targets: { warm_over_host: "<= 1.3", fresh_over_cli: "<= 1.0", pooled_over_cli: "<= 0.5" },
      pool: {
        hits: poolHits,
        of: o.runs,
        note: "pooled = a run served by a started, never-used pool member; its removal and the refill are off the run's path and untimed (the bench waits for both before the next sample)",
      },
      // other work on the machine moves every figure: read them with this in mind
      load_average: os.loadavg().map((l) => +l.toFixed(2)),
      cpus: os.cpus().length,
      note: haveCli
        ? "docker run --rm gets the sandbox's isolation flags and bind-mounts the workspace read-only (a baseline only; the sandbox never binds)"
        : `docker run --rm failed (${cliProblem}): CLI baseline skipped`,
      ...(family === "go" && {
        go_note:
          "host keeps its GOCACHE (compiled packages; -count=1 so test results are never reused) between rounds; host_cold starts each round from an empty GOCACHE. Every sandbox command starts from the image's seed (a build cache of the standard library, not of the package: /tmp is emptied and seeded again after every command); docker run --rm starts from an empty GOCACHE, as the spawner is not its main process",
      }),
    };
  } finally {
    await pool.drain();
    await session.close();
    for (const f of cleanups) f();
    w.cleanup();
  }
}

main(process.argv.slice(2), process.env).then(
  (code) => (process.exitCode = code),
  (err) => {
    process.stderr.write(`bench failed: ${isMiniAgentError(err) ? `${err.code}: ${err.message}` : (err as Error).message}\n`);
    process.exitCode = 1;
  },
);
