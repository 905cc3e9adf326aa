import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import picomatch from "picomatch";
import { resolveStateDir, statePath } from "../daemon/src/config/state-dir.js";
import { createDockerClient } from "../daemon/src/sandbox/docker-client.js";
import { DockerExecutor } from "../daemon/src/sandbox/docker-executor.js";
import { isMiniAgentError } from "../daemon/src/errors.js";
import { SANDBOX_USER } from "../daemon/src/sandbox/host-config.js";
import { seccompProfile } from "../daemon/src/sandbox/seccomp-profile.js";

/**
 * `npm run bench:sandbox [-- --runs N] [--runtime runc|runsc] [--state-dir DIR]`
 * In ONE run, the median wall time of the same test command as: a host
 * process, a warm exec (per-run sandbox: sync + exec + leftover kill), a fresh
 * container via the Engine API (what the Verifier uses), and `docker run --rm`
 * via the CLI. Targets: warm <= 1.3x host; fresh API <= CLI. A benchmark that
 * prints numbers, never a timed test.
 */
const REPO = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");

function parseArgs(argv: string[]) {
  const o = { runs: 10, runtime: "runc" as "runc" | "runsc", stateDir: undefined as string | undefined, cpus: undefined as number | undefined };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--runs") o.runs = Number(argv[++i]);
    else if (a === "--runtime") o.runtime = argv[++i] as "runc" | "runsc";
    else if (a === "--state-dir") o.stateDir = argv[++i];
    else if (a === "--cpus") o.cpus = Number(argv[++i]);
    else throw new Error(`unknown option ${a}; use --runs N, --runtime runc|runsc, --cpus N, --state-dir DIR`);
  }
  if (!Number.isInteger(o.runs) || o.runs < 1) throw new Error("--runs must be a positive integer");
  if (o.runtime !== "runc" && o.runtime !== "runsc") throw new Error("--runtime must be runc or runsc");
  if (o.cpus !== undefined && !(o.cpus > 0)) throw new Error("--cpus must be a positive number");
  return o;
}

/** The linkcheck fixture's candidate preset when present, else a tiny built-in node:test file. */
function workload(): { dir: string; argv: string[]; label: string; cleanup: () => void } {
  const fixture = path.join(REPO, "fixtures/linkcheck");
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "mini-agent-bench-"));
  // readable by uid 65534: the CLI baseline bind-mounts it
  fs.chmodSync(tmp, 0o755);
  if (fs.existsSync(path.join(fixture, "repo"))) {
    fs.cpSync(path.join(fixture, "repo"), tmp, { recursive: true, verbatimSymlinks: true });
    const task = JSON.parse(fs.readFileSync(path.join(fixture, "task.json"), "utf8"));
    const preset = task.test_presets[task.verify_preset];
    const isMatch = picomatch(preset.files as string[]);
    const files = (fs.readdirSync(tmp, { recursive: true }) as string[]).filter((f) => isMatch(f)).sort();
    return {
      dir: tmp,
      argv: [...preset.command, ...files],
      label: "fixtures/linkcheck (candidate preset)",
      cleanup: () => fs.rmSync(tmp, { recursive: true, force: true }),
    };
  }
  fs.writeFileSync(
    path.join(tmp, "t.test.mjs"),
    "import test from 'node:test';\nimport assert from 'node:assert';\ntest('adds', () => assert.equal(1 + 1, 2));\n",
  );
  return {
    dir: tmp,
    argv: ["node", "--test", "t.test.mjs"],
    label: "built-in node:test file",
    cleanup: () => fs.rmSync(tmp, { recursive: true, force: true }),
  };
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

function hostRun(dir: string, argv: string[]): Promise<number | null> {
  return new Promise((resolve) => {
    const c = spawn(argv[0] === "node" ? process.execPath : argv[0]!, argv.slice(1), {
      cwd: dir,
      env: { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: os.tmpdir() },
      stdio: "ignore",
    });
    c.on("close", resolve);
  });
}

async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const o = parseArgs(argv);
  const stateDir = resolveStateDir(env, o.stateDir);
  const docker = createDockerClient(env);
  const ex = new DockerExecutor({
    lockPath: statePath(stateDir, "imageLock"),
    config: { runtime: o.runtime, ...(o.cpus ? { nanoCpus: Math.round(o.cpus * 1e9) } : {}) },
    docker,
  });
  const digest = await ex.pinnedDigest();
  const w = workload();
  const req = { purpose: "bench" as const, argv: w.argv, workspaceDir: w.dir, timeoutMs: 120_000 };
  const samples: Record<string, number[]> = { host: [], warm: [], fresh: [], cli: [] };
  const cleanups: Array<() => void> = [];
  const session = await ex.openSession("bench-warm");
  try {
    // one untimed round first: page cache, image layers, the engine's own warm-up
    const check = await session.exec(req);
    if (check.exit_code !== 0) throw new Error(`the workload fails in the sandbox (exit ${check.exit_code}): ${check.stderr.slice(0, 400)}`);
    await hostRun(w.dir, w.argv);
    await ex.run({ ...req, runId: "bench-fresh" });
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
      `/tmp:rw,nosuid,nodev,noexec,size=${c.tmpfsBytes},mode=1777`,
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
      samples.host!.push(await time(() => hostRun(w.dir, w.argv)));
      samples.warm!.push(await time(() => session.exec(req)));
      samples.fresh!.push(await time(() => ex.run({ ...req, runId: "bench-fresh" })));
      if (haveCli) samples.cli!.push(await time(() => new Promise((r) => spawn("docker", cliArgs, { stdio: "ignore" }).on("close", r))));
    }
    const m = Object.fromEntries(
      Object.entries(samples)
        .filter(([, v]) => v.length)
        .map(([k, v]) => [k, Math.round(median(v))]),
    );
    const out = {
      workload: w.label,
      argv: w.argv,
      runtime: o.runtime,
      sandbox_cpus: ex.config.nanoCpus / 1e9,
      runs: o.runs,
      median_ms: m,
      ratios: {
        warm_over_host: +(m.warm! / m.host!).toFixed(2),
        fresh_over_cli: m.cli ? +(m.fresh! / m.cli).toFixed(2) : null,
        fresh_over_host: +(m.fresh! / m.host!).toFixed(2),
      },
      targets: { warm_over_host: "<= 1.3", fresh_over_cli: "<= 1.0" },
      // other work on the machine moves every figure: read them with this in mind
      load_average: os.loadavg().map((l) => +l.toFixed(2)),
      cpus: os.cpus().length,
      note: haveCli
        ? "docker run --rm gets the sandbox's isolation flags and bind-mounts the workspace read-only (a baseline only; the sandbox never binds)"
        : `docker run --rm failed (${cliProblem}): CLI baseline skipped`,
    };
    process.stdout.write(JSON.stringify(out, null, 2) + "\n");
    return 0;
  } finally {
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
