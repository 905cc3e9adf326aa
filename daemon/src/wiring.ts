import { collectGarbage } from "./retention/gc.js";
import { createStateDirSize, STATE_DIR_SIZE_MAX_AGE_MS } from "./retention/state-dir-size.js";
import type Docker from "dockerode";
import { readLatestPassingReport } from "../../probes/report-store.js";
import { runIsolationProbes } from "../../probes/run.js";
import type { IsolationService, LiveGate } from "./api/ports.js";
import { instanceIdFor, statePath } from "./config/state-dir.js";
import type { HealthBody } from "./contracts/api.js";
import type { Backend, Runtime } from "./contracts/sandbox.js";
import type { ImageFamily } from "./contracts/test-report.js";
import { MiniAgentError } from "./errors.js";
import { checkLiveGate } from "./gate/live-gate.js";
import { readIsolationReportSummary } from "./gate/probe-report.js";
import { createLiveRunRecorder } from "./live-record/recorder.js";
import { sandboxIsolationFacts } from "./gate/sandbox-facts.js";
import type { DaemonServices, ServiceContext } from "./main.js";
import { resolveLiveModelConfig } from "./models/live/config.js";
import { crashHookFromEnv } from "./runtime/crash.js";
import type { LiveModelRequest } from "./runtime/ports.js";
import { createRunService } from "./runtime/service-impl.js";
import { resolveSandboxConfig } from "./sandbox/config.js";
import { customFamilyNeeds, knownFamiliesAt } from "./sandbox/families.js";
import { createDockerClient } from "./sandbox/docker-client.js";
import { DockerExecutor } from "./sandbox/docker-executor.js";
import { DependencyLayers } from "./sandbox/dependency-layer.js";
import { hostInstallTools } from "./sandbox/install-sandbox.js";
import { createEnvService } from "./runtime/env-layers.js";
import { createEnvBuild } from "./runtime/env-build.js";
import { LocalExecutor } from "./sandbox/local-executor.js";
import type { Executor } from "./sandbox/executor.js";
import type { IsolationFacts } from "./gate/isolation-facts.js";
import { reapLeftovers } from "./sandbox/reaper.js";
import { SandboxPool } from "./sandbox/sandbox-pool.js";
import { OWNER_FILTER, RUN_LABEL } from "./sandbox/labels.js";
import { createCaptureService } from "./capture/index.js";

/** The named variables of `env` that are set, as a plain record */
function pickDefined<K extends string>(env: NodeJS.ProcessEnv, names: readonly K[]): Partial<Record<K, string>> {
  const out: Partial<Record<K, string>> = {};
  for (const k of names) if (env[k]) out[k] = env[k];
  return out;
}

/**
 * The daemon's real parts, assembled once at start-up: one Docker client, one
 * executor per backend, the isolation facts the gate and health share, the
 * live model factory (gate first, key on the first turn) and the RunService.
 */
export async function createDefaultServices(ctx: ServiceContext): Promise<DaemonServices> {
  const { config, log, credentials, env } = ctx;
  const docker = createDockerClient(env);
  const lockPath = statePath(config.stateDir, "imageLock");
  const instance = instanceIdFor(config.stateDir);
  // a custom family gets its base family's sandbox needs (families.ts), merged under the caller's
  const customFamilyNeedsOf = (family: string) => customFamilyNeeds(family, lockPath);
  // one set of sandbox overrides: the executor, the gate and each family's config are made from it
  const sandboxOverrides = (imageFamily?: string, runtime?: Runtime) => ({
    runtime: runtime ?? config.runtime,
    instance,
    ...(imageFamily ? { imageFamily, ...customFamilyNeedsOf(imageFamily) } : {}),
  });
  const sandbox = resolveSandboxConfig(sandboxOverrides());
  // one pool for every family's executor: its key keeps their sandboxes apart; drained in close()
  const pool = new SandboxPool({ docker, size: config.sandboxPool, log: log.child({ part: "sandbox-pool" }) });
  const sandboxLog = log.child({ part: "sandbox" });
  // one layer store for every family's executor: a layer is content, the same for every image that mounts it
  const layers = new DependencyLayers({ docker, dir: statePath(config.stateDir, "layers"), instance, log: sandboxLog });
  // the host's npm (beside the node running this daemon) and shell, mounted read-only into install sandboxes alone
  const installTools = hostInstallTools(process.execPath, env.NODE_EXTRA_CA_CERTS) ?? undefined;
  const container = new DockerExecutor({ lockPath, config: sandboxOverrides(), docker, pool, layers, ...(installTools && { installTools }), log: sandboxLog });
  // one executor per (image family, runtime), made on first use and kept: a run's warm session, Verifier
  // and acceptance all use its task's family and its own runtime (`--runtime`, else the daemon's), so each
  // has its own HostConfig and pool key; its preflight refuses a runtime the engine does not have
  const executorKey = (family: string, runtime: Runtime) => `${family}/${runtime}`;
  const containers = new Map<string, DockerExecutor>([[executorKey(sandbox.imageFamily, sandbox.runtime), container]]);
  const containerFor = (family: ImageFamily, runtime: Runtime = config.runtime): DockerExecutor => {
    let executor = containers.get(executorKey(family, runtime));
    if (!executor) {
      executor = new DockerExecutor({
        lockPath,
        config: sandboxOverrides(family, runtime),
        docker,
        pool,
        layers,
        ...(installTools && { installTools }),
        log: sandboxLog,
      });
      containers.set(executorKey(family, runtime), executor);
    }
    return executor;
  };

  const facts = sandboxIsolationFacts({
    docker,
    sandbox,
    sandboxFor: (family, runtime) => resolveSandboxConfig(sandboxOverrides(family, runtime)),
    lockPath,
    readReport: (key) => readIsolationReportSummary(config.stateDir, key),
  });
  const liveGate: LiveGate = {
    async check({ backend, family, runtime }) {
      const v = await checkLiveGate({ backend, facts, ...(family !== undefined ? { family } : {}), ...(runtime !== undefined ? { runtime } : {}) });
      return v.ok
        ? { ok: true, generated_at: v.report_generated_at }
        : { ok: false, code: v.code, reason: v.reason, message: v.message, refresh_command: v.refresh_command };
    },
  };

  // trusted_local runs host processes (built-in replays only; the runtime and the gate refuse it otherwise);
  // it has no OCI runtime, so createRun refuses `--runtime` with it
  const local = new LocalExecutor({ config: { runtime: config.runtime } });
  const executorFactory = (backend: Backend, family: ImageFamily, runtime?: Runtime): Executor =>
    backend === "container" ? containerFor(family, runtime) : local;

  // Every live run leaves a redacted record in <state>/live-runs when it stops (issue 6).
  const recorder = createLiveRunRecorder({
    stateDir: config.stateDir,
    service: () => runService,
    budgetsOf: (id) => runService.ledger.getRun(id).record.budgets,
    onError: (runId, err) => log.warn({ runId, err }, "live run record could not be written"),
  });

  const runService = createRunService({
    stateDir: config.stateDir,
    executorFactory,
    knownSecrets: () => ctx.secrets.values(),
    // Resolved per live run so a bad MINI_AGENT_* setting refuses that run, not the daemon.
    modelFactory: async (req: LiveModelRequest) => {
      const liveConfig = resolveLiveModelConfig(env);
      // the live model's HTTP stack (undici) is loaded by the first live run, not by every daemon start
      const { createLiveModelFactory } = await import("./gate/live-model-factory.js");
      const factory = createLiveModelFactory({
        facts,
        config: liveConfig,
        credentials,
        recorder,
        log: log.child({ part: "live-model" }),
        workspaceOf: (r) => {
          try {
            const record = runService.ledger.getRun(r.runId).record;
            return { root: record.workspace, controlDir: record.control_dir };
          } catch {
            return null; // not in the ledger yet: the protocol prompt alone
          }
        },
      });
      return factory(req);
    },
    logger: log.child({ part: "runtime" }),
    // unset in normal use; the recovery tests name a point where the daemon SIGKILLs itself
    crash: crashHookFromEnv(env),
    controlLimits: config.controlLimits,
    copyLimits: config.copyLimits,
    policy: ctx.policy,
  });

  // One probe run at a time: they start several containers and plant a canary in this process's env.
  let probing: Promise<unknown> = Promise.resolve();
  const isolation: IsolationService = {
    runProbes(runtime, family) {
      // the family's sandbox overrides, exactly as its executor gets them: the report is keyed by that HostConfig
      const probeConfig = { ...sandboxOverrides(family), runtime: runtime ?? config.runtime };
      const next = probing.catch(() => undefined).then(() => runIsolationProbes({ stateDir: config.stateDir, config: probeConfig, docker, hostEnv: env }));
      probing = next;
      return next as Promise<unknown> as Promise<Record<string, unknown>>;
    },
    async latestReport() {
      const current = await facts.currentKey();
      if (!current.ok) return null;
      return (await readLatestPassingReport(config.stateDir, current.key)) as Record<string, unknown> | null;
    },
    health: () => health(docker, container, liveGate, config.runtime, facts, config.stateDir),
  };
  const stateDirSize = createStateDirSize({ stateDir: config.stateDir, now: () => Date.now(), maxAgeMs: STATE_DIR_SIZE_MAX_AGE_MS });

  return {
    runService,
    containerFor: (family) => containerFor(family),
    isolation,
    liveGate,
    capture: createCaptureService({ ledger: () => runService.ledger, stateDir: config.stateDir }),
    env: createEnvService({
      layers,
      runs: () => runService.ledger.listRuns(),
      now: () => Date.now(),
      build: createEnvBuild({
        installerFor: (family) => containerFor(family as ImageFamily),
        home: env.HOME ?? null,
        // where pip and Go download from, when the user's environment says so (read here, passed as data)
        env: pickDefined(env, [
          "PIP_INDEX_URL",
          "PIP_EXTRA_INDEX_URL",
          "PIP_CONFIG_FILE",
          "XDG_CONFIG_HOME",
          "GOPROXY",
          "GOSUMDB",
          "GONOSUMDB",
          "GOPRIVATE",
          "GOFLAGS",
          "GOENV",
        ]),
      }),
    }),
    retention: {
      gc: async (opts) => {
        const freed = await collectGarbage({ stateDir: config.stateDir, runs: () => runService.ledger.listRuns(), now: () => Date.now() }, opts);
        if (!opts.dryRun) stateDirSize.invalidate();
        return freed;
      },
      stateDir: async () => ({ path: config.stateDir, bytes: await stateDirSize.bytes() }),
    },
    reapLeftovers: () =>
      reapOwnLeftovers(
        docker,
        instance,
        runService.listRuns().map((r) => r.run_id),
      ),
    close: async () => {
      const drained = await pool.drain();
      log.info({ drained }, "sandbox pool drained");
      // Runs are persisted and their sandboxes were told to go: anything of this daemon's still in the
      // engine (a removal the engine refused under load, a sandbox of a run that did not stop in time) goes
      // now, as the next start-up's reaper would take it, so a stopped daemon leaves nothing behind.
      const swept = await reapLeftovers(docker, { instance }).catch((err: unknown) => {
        log.warn({ err }, "could not sweep this daemon's sandboxes at shutdown (engine unreachable?)");
        return null;
      });
      if (swept && swept.containers + swept.volumes > 0) log.warn({ swept }, "sandboxes still present at shutdown were removed");
      await recorder.close();
    },
  };
}

/**
 * Removes what THIS daemon left in the engine: everything carrying its instance
 * label (probe sandboxes included), and anything of a run in its ledger. Not
 * every labelled container: another daemon (another state dir) on the same
 * engine may be running sandboxes right now, and a start-up must never kill those.
 */
async function reapOwnLeftovers(docker: Docker, instance: string, runIds: string[]): Promise<number> {
  let removed = (await reapLeftovers(docker, { instance })).containers;
  const mine = new Set(runIds);
  const present = new Set<string>();
  const label = [OWNER_FILTER];
  for (const c of await docker.listContainers({ all: true, filters: { label } })) {
    const run = c.Labels?.[RUN_LABEL];
    if (run && mine.has(run)) present.add(run);
  }
  for (const v of (await docker.listVolumes({ filters: { label } })).Volumes ?? []) {
    const run = v.Labels?.[RUN_LABEL];
    if (run && mine.has(run)) present.add(run);
  }
  for (const runId of present) removed += (await reapLeftovers(docker, { runId })).containers;
  return removed;
}

/** Engine facts plus the gate's verdict, so health and `--model live` never disagree. */
async function health(
  docker: Docker,
  container: DockerExecutor,
  gate: LiveGate,
  runtime: string,
  facts: IsolationFacts,
  stateDir: string,
): Promise<Pick<HealthBody, "engine" | "isolation" | "families">> {
  const engine: HealthBody["engine"] = { reachable: false, version: null, runtime, image_digest: null, image_present: false, error: null };
  try {
    engine.version = (await docker.version()).Version ?? null;
    engine.reachable = true;
  } catch {
    engine.error = "no Docker engine is reachable (DOCKER_HOST or /var/run/docker.sock); run `npm run docker:ensure`";
    return { engine, isolation: { verdict: "unavailable", generated_at: null, reason: "runtime_unavailable" } };
  }
  try {
    engine.image_digest = await container.pinnedDigest();
    engine.image_present = true;
  } catch (err) {
    engine.error = err instanceof MiniAgentError ? err.message : "the pinned image could not be checked";
  }
  const isolation = await isolationVerdict(gate, facts, stateDir);
  // the other families' verdicts: each is what the live gate would say for a run of that family
  const families: NonNullable<HealthBody["families"]> = {};
  // custom ones too: a worker of a custom family reads its family's verdict here, never the default family's
  for (const family of knownFamiliesAt(statePath(stateDir, "imageLock"))) {
    if (family !== container.config.imageFamily) families[family] = await isolationVerdict(gate, facts, stateDir, family);
  }
  return { engine, isolation, families };
}

async function isolationVerdict(gate: LiveGate, facts: IsolationFacts, stateDir: string, family?: ImageFamily): Promise<HealthBody["isolation"]> {
  const v = await gate.check({ backend: "container", ...(family !== undefined && { family }) });
  if (v.ok) return { verdict: "passed", generated_at: v.generated_at ?? null, reason: null };
  if (v.reason === "runtime_unavailable") return { verdict: "unavailable", generated_at: null, reason: v.reason };
  if (v.reason === "image_missing") return { verdict: "none", generated_at: null, reason: v.reason };
  // the gate says "report_stale" both for an old report and for none at all; health tells them apart
  const current = await facts.currentKey(family).catch(() => null);
  const summary = current?.ok ? await readIsolationReportSummary(stateDir, current.key).catch(() => null) : null;
  // "none" with no_report: never probed (a first-time user's state), not "stale"
  if (summary === null) return { verdict: "none", generated_at: null, reason: "no_report" };
  return { verdict: summary.passed ? "stale" : "failed", generated_at: summary.generated_at, reason: v.reason };
}
