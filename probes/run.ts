import crypto from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type Docker from "dockerode";
import { statePath } from "../daemon/src/config/state-dir.js";
import { createDockerClient } from "../daemon/src/sandbox/docker-client.js";
import { DockerExecutor } from "../daemon/src/sandbox/docker-executor.js";
import { customFamilyNeeds } from "../daemon/src/sandbox/families.js";
import { hostConfigHash } from "../daemon/src/sandbox/config-hash.js";
import { IN_IMAGE } from "../daemon/src/sandbox/host-config.js";
import { hostCanSpawn, leftovers, runtimeRegistrationProbe } from "./host-probes.js";
import { CANARY_ENV, insideProbes, p } from "./inside-run.js";
import { INSTALL_PREFIX, installSandboxProbes } from "./install-probes.js";
import { LAYER_PREFIX, layerSandboxProbes } from "./layer-probes.js";
import { isMiniAgentError } from "../daemon/src/errors.js";
import { hostInstallTools, installKindFor } from "../daemon/src/sandbox/install-sandbox.js";
import { writeReport } from "./report-store.js";
import { pooledProbe } from "./pool-probe.js";
import { SandboxPool } from "../daemon/src/sandbox/sandbox-pool.js";
import { REPORT_SCHEMA_VERSION, type IsolationReport, type ProbeResult, type UnavailableReport } from "./types.js";

export interface ProbeOptions {
  stateDir: string;
  /** sandbox overrides (same object the daemon's executor gets). */
  config?: unknown;
  docker?: Docker;
  /** the host's own environment, where the canary secret is planted. */
  hostEnv?: NodeJS.ProcessEnv;
  now?: () => Date;
  /** the pool the pooled_indistinguishable probe takes from (tests hand in one they prepared); default: its own, drained after */
  pool?: SandboxPool;
  /** the host's npm, shell and pip for the install sandbox's probes (default: beside this node, Debian's pip); null: none here */
  installTools?: { npmRoot: string; shell: string; pipRoot?: string } | null;
}

/** The given overrides over a custom family's base needs: the probes prove the HostConfig its runs get. */
function probeConfig(opts: ProbeOptions): unknown {
  const c = (opts.config ?? {}) as Record<string, unknown>;
  if (typeof c.imageFamily !== "string") return c;
  return { ...customFamilyNeeds(c.imageFamily, statePath(opts.stateDir, "imageLock")), ...c };
}

/** A sandbox kind's probes, or one failed probe saying why they could not run: never a crash of the whole report. */
async function section(prefix: string, run: () => Promise<ProbeResult[]>): Promise<ProbeResult[]> {
  try {
    return await run();
  } catch (err) {
    const why = isMiniAgentError(err) ? `${err.code}: ${err.message}` : String((err as Error)?.message ?? err);
    return [p(`${prefix}ran`, "this sandbox kind could be made and probed", "its probes ran", why, false, "anything: its probes did not run")];
  }
}

/**
 * Proves the sandbox configuration before any candidate code runs: a FRESH
 * container made by DockerExecutor.runFresh (the candidate code path) runs the
 * baked probe program bound to a nonce, while the host inspects that same
 * container; then the resource, deadline and clean-up probes run through the
 * executor too. The report is stored keyed by (digest, HostConfig hash,
 * engine version, runtime).
 */
export async function runIsolationProbes(opts: ProbeOptions): Promise<IsolationReport | UnavailableReport> {
  const now = opts.now ?? (() => new Date());
  const docker = opts.docker ?? createDockerClient({});
  const executor = new DockerExecutor({ lockPath: statePath(opts.stateDir, "imageLock"), config: probeConfig(opts), docker });
  const config = executor.config;
  let engineVersion: string;
  let engineInfo: Record<string, unknown>;
  try {
    engineVersion = (await docker.version()).Version;
    engineInfo = (await docker.info()) as Record<string, unknown>;
  } catch {
    return {
      schema_version: REPORT_SCHEMA_VERSION,
      available: false,
      isolation_passed: false,
      reason: "runtime_unavailable",
      runtime: config.runtime,
      image_family: config.imageFamily,
      generated_at: now().toISOString(),
      passed: false,
    };
  }
  const digest = await executor.pinnedDigest();
  const nonce = crypto.randomBytes(16).toString("hex");
  const hostEnv = opts.hostEnv ?? process.env;
  const canary = crypto.randomBytes(24).toString("hex");
  const canaryFileName = `probe-canary-${nonce}`;
  const canaryFile = path.join(opts.stateDir, canaryFileName);
  const scratch = await fs.mkdtemp(path.join(os.tmpdir(), "mini-agent-probe-"));
  const probes: ProbeResult[] = [runtimeRegistrationProbe(engineInfo, config.runtime)];
  const previous = hostEnv[CANARY_ENV];
  hostEnv[CANARY_ENV] = canary;
  try {
    await fs.mkdir(opts.stateDir, { recursive: true, mode: 0o700 });
    await fs.writeFile(canaryFile, canary, { mode: 0o600 });
    const ws = path.join(scratch, "workspace");
    const ctl = path.join(scratch, "control");
    await fs.mkdir(ws);
    await fs.mkdir(ctl);
    await fs.writeFile(path.join(ws, "README"), "probe workspace\n");
    await fs.writeFile(path.join(ctl, "case.json"), "{}\n");

    const inside = { nonce, ws, ctl, canary, canaryFileName, stateDir: opts.stateDir };
    const fresh = await insideProbes(executor, docker, digest, inside);
    probes.push(...fresh.results);
    // the same probe program again, in a sandbox from the pool: it must be indistinguishable
    const pool = opts.pool ?? new SandboxPool({ docker, size: 1 });
    try {
      const pooledExecutor = new DockerExecutor({ lockPath: statePath(opts.stateDir, "imageLock"), config: probeConfig(opts), docker, pool });
      await pool.whenFilled({ config: pooledExecutor.config, digest, withControl: true });
      const pooled = await insideProbes(pooledExecutor, docker, digest, inside);
      probes.push(
        fresh.handOver && pooled.handOver
          ? pooledProbe(fresh.handOver, pooled.handOver)
          : {
              id: "pooled_indistinguishable",
              property: "a sandbox from the pool is handed over exactly as a fresh one",
              expected: "both hand-overs observed",
              observed: { fresh: fresh.handOver !== null, pooled: pooled.handOver !== null },
              passed: false,
              does_not_prove: "anything: a hand-over was not observed",
            },
      );
    } finally {
      if (!opts.pool) await pool.drain();
    }
    // the other sandbox kinds a run of this configuration uses, each in its own configuration (issue 25)
    probes.push(...(await section(LAYER_PREFIX, () => layerSandboxProbes(executor, docker, digest, inside, scratch))));
    // the family's install sandbox (npm, pip or go), if it has one here: no npm or sh on this host, or no pip for a
    // pip install, and this daemon makes no such sandbox (DockerExecutor.install, runInstall refuse), nothing to prove
    const tools = opts.installTools === undefined ? hostInstallTools(process.execPath, undefined) : opts.installTools;
    const kind = installKindFor(config);
    if (kind !== null && tools && (kind !== "pip" || tools.pipRoot))
      probes.push(...(await section(INSTALL_PREFIX, () => installSandboxProbes({ docker, config, digest, kind, tools }, inside))));
    probes.push(...(await resourceProbes(executor, docker, nonce, ws)));
  } finally {
    if (previous === undefined) delete hostEnv[CANARY_ENV];
    else hostEnv[CANARY_ENV] = previous;
    await fs.rm(canaryFile, { force: true });
    await fs.rm(scratch, { recursive: true, force: true });
  }
  const report: IsolationReport = {
    schema_version: REPORT_SCHEMA_VERSION,
    available: true,
    engine_version: engineVersion,
    runtime: config.runtime,
    image_family: config.imageFamily,
    image_digest: digest,
    // the executor's own config made every probe container: the same HostConfig as its candidate runs
    host_config_hash: hostConfigHash(config),
    generated_at: now().toISOString(),
    nonce,
    probes,
    passed: probes.every((x) => x.passed),
  };
  await writeReport(opts.stateDir, report);
  return report;
}

async function resourceProbes(executor: DockerExecutor, docker: Docker, nonce: string, ws: string): Promise<ProbeResult[]> {
  const config = executor.config;
  const out: ProbeResult[] = [];
  const run = async (name: string, argv: string[], timeoutMs: number, abortAfterStartMs?: number) => {
    const runId = `probe-${nonce.slice(0, 12)}-${name}`;
    const ids: string[] = [];
    const ctl = new AbortController();
    const res = await executor.runFresh(
      { runId, purpose: "probe", argv, workspaceDir: ws, timeoutMs, signal: ctl.signal },
      {
        onStarted: async (box) => {
          ids.push(box.id);
          if (abortAfterStartMs !== undefined) setTimeout(() => ctl.abort(), abortAfterStartMs).unref();
        },
      },
    );
    return { res, left: await leftovers(docker, runId, ids) };
  };
  const clean = (l: { containers: number; volumes: number; processes: number[] }) => l.containers === 0 && l.volumes === 0 && l.processes.length === 0;

  const bomb = await run("forkbomb", [IN_IMAGE.syscallHelper, "forkbomb"], 60_000);
  let bombOut: { forked?: number; error?: string } = {};
  try {
    bombOut = JSON.parse(bomb.res.stdout.trim());
  } catch {
    bombOut = {};
  }
  const spawnOk = hostCanSpawn();
  // runc: the pids cgroup makes fork fail with EAGAIN. runsc: forks are tasks of the gVisor kernel,
  // so the bomb ends with the whole sandbox killed instead; either way it is contained.
  const eagain = bombOut.error === "EAGAIN" && (bombOut.forked ?? Infinity) < config.pidsLimit;
  // (measured: exit_code null when the whole sandbox dies, 128 when the exec itself is torn down)
  const sandboxKilled =
    config.runtime === "runsc" && !bomb.res.timed_out && bombOut.forked === undefined && (bomb.res.exit_code === null || bomb.res.exit_code >= 128);
  out.push(
    p(
      "pids_limit",
      "a fork bomb is contained by the pids limit and the host is unaffected",
      config.runtime === "runsc"
        ? `fork fails with EAGAIN before ${config.pidsLimit} processes, or the sandbox is killed; host can still spawn`
        : `fork fails with EAGAIN before ${config.pidsLimit} processes; host can still spawn`,
      {
        ...bombOut,
        exit_code: bomb.res.exit_code,
        timed_out: bomb.res.timed_out,
        oom_killed: bomb.res.oom_killed,
        host_can_spawn: spawnOk,
        leftovers: bomb.left,
      },
      (eagain || sandboxKilled) && spawnOk && clean(bomb.left),
      config.runtime === "runsc"
        ? "that gVisor enforces the pids limit per task (the bomb ends by killing the sandbox)"
        : "limits on threads inside one process beyond the same pids cgroup",
    ),
  );

  // the static helper, not a language runtime: the same resource probes in every image family
  const mem = await run("memory", [IN_IMAGE.syscallHelper, "memory"], 60_000);
  out.push(
    p(
      "memory_limit",
      "the memory limit holds: the allocation is OOM-killed and reported, no hang",
      "oom_killed=true, timed_out=false",
      { oom_killed: mem.res.oom_killed, exit_code: mem.res.exit_code, timed_out: mem.res.timed_out, leftovers: mem.left },
      mem.res.oom_killed && !mem.res.timed_out && clean(mem.left),
      "page-cache or kernel memory accounting outside the cgroup",
    ),
  );

  const stubborn = [IN_IMAGE.syscallHelper, "stubborn"];
  const deadline = await run("deadline", stubborn, 2_000);
  out.push(
    p(
      "sigterm_deadline",
      "a process ignoring SIGTERM is gone at the deadline; no container, volume or process remains",
      "timed_out=true; no leftovers",
      { timed_out: deadline.res.timed_out, exit_code: deadline.res.exit_code, duration_ms: deadline.res.duration_ms, leftovers: deadline.left },
      deadline.res.timed_out && !deadline.res.cancelled && clean(deadline.left),
      "how quickly the engine completes the kill (not a timing assertion)",
    ),
  );

  const cancel = await run("cancel", stubborn, 60_000, 500);
  out.push(
    p(
      "cancel_cleanup",
      "cancel kills the sandbox; no container, volume or process remains",
      "cancelled=true; no leftovers",
      { cancelled: cancel.res.cancelled, timed_out: cancel.res.timed_out, leftovers: cancel.left },
      cancel.res.cancelled && clean(cancel.left),
      "clean-up after a crash of the daemon itself (the start-up reaper covers that)",
    ),
  );
  return out;
}
