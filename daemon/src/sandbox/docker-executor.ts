import type Docker from "dockerode";
import { pino, type Logger } from "pino";
import type { DependencyLayerRef, ExportSpec, SandboxResult, SandboxRunRequest, Runtime } from "../contracts/sandbox.js";
import { MiniAgentError } from "../errors.js";
import { buildExecEnv, resolveSandboxConfig, type SandboxConfig } from "./config.js";
import { createDockerClient } from "./docker-client.js";
import type { Executor, SandboxSession } from "./executor.js";
import { IN_IMAGE } from "./host-config.js";
import { engineError, resolvePinnedImage } from "./image-pin.js";
import { readImagePrograms } from "./image-programs.js";
import { SandboxContainer, spawnerLostError } from "./sandbox-container.js";
import { checkReportRequest, NOT_READ_AFTER_STOP, readReportIn } from "./report-read.js";
import { refuseChangedList } from "./changed-list.js";
import { toResult } from "./result.js";
import { WarmSession } from "./warm-session.js";
import type { SandboxPool } from "./sandbox-pool.js";
import { withLayerEnv, type DependencyLayers, type LayerRecord } from "./dependency-layer.js";
import type { EgressEvent } from "../egress/index.js";
import { type HostInstallTools, INSTALL_RUNTIME, type InstallRequest, removeInstallDir, runInstall } from "./install-sandbox.js";
import { familyInstallKind, INSTALL_FOLDER, type InstallKind } from "./install-tools.js";
import { checkExportFits, listExport } from "../workspace/index.js";
import { notifyIncluded, packControl, packExport, PUT_WORKSPACE_TIMEOUT_MS } from "./workspace-tar.js";

export interface DockerExecutorOptions {
  /** path of the image lock: statePath(stateDir, "imageLock"). */
  lockPath: string;
  /** sandbox overrides; unknown keys are rejected (see SANDBOX_DEFAULTS). */
  config?: unknown;
  docker?: Docker;
  now?: () => number;
  /** pino logger for sandbox lifecycle problems (default: silent). */
  log?: Logger;
  /** ready, never-used sandboxes for `run` (sandbox-pool.ts); without it every run creates its own. */
  pool?: SandboxPool;
  /** dependency layers (dependency-layer.ts); without it no run gets one and dependency folders are copied as before */
  layers?: DependencyLayers;
  /** the host's npm and shell, mounted read-only into install sandboxes alone (install-sandbox.ts); without them `install` is refused */
  installTools?: InstallTools;
}

/** The host's tools an install sandbox mounts (install-sandbox.ts InstallSandboxDeps) */
export type InstallTools = HostInstallTools;

/** What `install` reports: the command's outcome, every egress decision, and the layer it made (exit 0 only). */
export interface InstallResult {
  exitCode: number | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  egress: EgressEvent[];
  layer: LayerRecord | null;
  /** the kernel killed the install for the install sandbox's memory limit (`memoryBytes`) */
  oomKilled: boolean;
  memoryBytes: number;
}

export interface FreshRunHooks {
  /** the started sandbox, before anything is put in it; `pooled`: it came from the pool (the probes compare the two) */
  beforeContent?: (box: SandboxContainer, pooled: boolean) => Promise<void>;
  /** the sandbox with the workspace (and control) in it, before the command runs */
  onStarted?: (box: SandboxContainer) => Promise<void>;
  /** how long each step of the run took (the bench's breakdown); must not throw */
  onStep?: (step: FreshRunStep, ms: number) => void;
}

export type FreshRunStep = "list_export" | "pin" | "take" | "put_workspace" | "put_control" | "run" | "report";

/**
 * Runs candidate code in Docker containers pinned by digest (Engine API via
 * dockerode; the CLI is never used). `run` makes a FRESH container per call
 * (verifier, acceptance, probes); `openSession` keeps one warm container per
 * agent run. Both go through SandboxContainer, so they share one HostConfig.
 */
export class DockerExecutor implements Executor {
  readonly kind = "container" as const;
  readonly config: SandboxConfig;
  readonly docker: Docker;
  private readonly lockPath: string;
  private readonly now: () => number;
  private readonly log: Logger;
  private readonly pool: SandboxPool | null;
  private readonly layers: DependencyLayers | null;
  private readonly installTools: InstallTools | null;

  constructor(opts: DockerExecutorOptions) {
    const known = new Set(["lockPath", "config", "docker", "now", "log", "pool", "layers", "installTools"]);
    for (const k of Object.keys(opts)) {
      if (!known.has(k)) throw new MiniAgentError("invalid_fields", `unknown DockerExecutor option ${k}; known: ${[...known].join(", ")}`);
    }
    this.config = resolveSandboxConfig(opts.config ?? {});
    this.docker = opts.docker ?? createDockerClient({});
    this.lockPath = opts.lockPath;
    this.now = opts.now ?? (() => performance.now());
    this.log = opts.log ?? pino({ level: "silent" });
    this.pool = opts.pool ?? null;
    this.layers = opts.layers ?? null;
    this.installTools = opts.installTools ?? null;
  }

  /** This family's one install tool, whatever the runtime (install() refuses runsc): env build refuses any other. */
  get installKind(): InstallKind | null {
    return familyInstallKind(this.config);
  }

  /**
   * Runs an install command in an install sandbox (install-sandbox.ts) of this
   * executor's family and makes what it produced the workspace's dependency
   * layer. A command that fails makes no layer and changes nothing.
   */
  async install(req: InstallRequest, onEgress?: (e: EgressEvent) => void): Promise<InstallResult> {
    if (!this.layers || !this.installTools)
      throw new MiniAgentError("sandbox_error", "this daemon has no install sandbox (no dependency layer store or no npm)");
    // (which tool this family installs with is env build's to check, from installKind; the runtime is this sandbox's: install-sandbox.ts installKindFor)
    if (this.config.runtime !== INSTALL_RUNTIME)
      throw new MiniAgentError(
        "invalid_request",
        `the install sandbox needs ${INSTALL_RUNTIME}, not ${this.config.runtime}: under gVisor it cannot reach the egress proxy's socket; start the daemon with --runtime ${INSTALL_RUNTIME} to install`,
        { details: { image_family: this.config.imageFamily, runtime: this.config.runtime } },
      );
    const digest = await this.pinnedDigest();
    const out = await runInstall({ docker: this.docker, config: this.config, digest, ...this.installTools, log: this.log, ...(onEgress && { onEgress }) }, req);
    try {
      const folder = INSTALL_FOLDER[req.tool.kind];
      const layer = out.resultRoot ? await this.layers.adoptInstalled(out.resultRoot, folder, req.workspace, req.spec, this.config, digest, req.command) : null;
      return {
        exitCode: out.exitCode,
        timedOut: out.timedOut,
        stdout: out.stdout,
        stderr: out.stderr,
        egress: out.egress,
        layer,
        oomKilled: out.oomKilled,
        memoryBytes: out.memoryBytes,
      };
    } finally {
      if (out.resultRoot) removeInstallDir(out.resultRoot);
    }
  }

  async prepareLayers(workspaceRoot: string, spec: ExportSpec): Promise<DependencyLayerRef[]> {
    if (!this.layers) return [];
    return this.layers.ensure(workspaceRoot, spec, this.config, await this.pinnedDigest());
  }

  private readonly programsOf = new Map<string, Promise<string[]>>();

  /** The programs on the pinned image's PATH (image-programs.ts), read once per digest for the daemon's life. */
  async programs(): Promise<readonly string[]> {
    const digest = await this.pinnedDigest();
    let p = this.programsOf.get(digest);
    if (!p) {
      p = readImagePrograms(this.docker, this.config, digest);
      this.programsOf.set(digest, p);
      // an engine error is not the image's answer: asked again next time
      p.catch(() => this.programsOf.delete(digest));
    }
    return p;
  }

  /** The digest every container is created from; throws image_missing / image_digest_mismatch / runtime_unavailable. */
  pinnedDigest(): Promise<string> {
    return resolvePinnedImage(this.docker, this.config, this.lockPath);
  }

  /**
   * A run would otherwise be accepted, ask for approvals and write, and only
   * fail at its first run_tests (issue 10 item 6). Checked without starting a
   * container: the engine answers, the configured runtime is registered, and
   * the lock pins an image for this family that the engine has.
   */
  async preflight(): Promise<void> {
    let runtimes: Record<string, unknown>;
    try {
      runtimes = ((await this.docker.info()) as { Runtimes?: Record<string, unknown> }).Runtimes ?? {};
    } catch (err) {
      throw new MiniAgentError(
        "runtime_unavailable",
        "no Docker engine is reachable (DOCKER_HOST or /var/run/docker.sock); start one with `npm run docker:ensure`",
        {
          cause: err,
        },
      );
    }
    if (!(this.config.runtime in runtimes)) {
      throw new MiniAgentError(
        "runtime_unavailable",
        `the OCI runtime ${this.config.runtime} is not registered with the Docker engine; \`npm run docker:ensure\` registers runsc where it is installed, or choose runc (\`run --runtime runc\`, or the daemon's --runtime runc)`,
      );
    }
    const digest = await this.pinnedDigest();
    // a run of this family is coming: its Verifier's fresh sandboxes start now, in the background
    for (const withControl of [false, true]) this.pool?.warm({ config: this.config, digest, withControl });
    // and its programs are read (once per image: the node binary alone is ~100 MB of archive), for the run's policy
    this.programs().catch(() => undefined);
  }

  async describe(): Promise<{ runtime: Runtime; imageDigest: string | null; engineVersion: string | null }> {
    let engineVersion: string | null = null;
    try {
      engineVersion = (await this.docker.version()).Version ?? null;
    } catch (err) {
      throw engineError(err);
    }
    const imageDigest = await this.pinnedDigest().catch((err) => {
      if (err instanceof MiniAgentError && (err.code === "image_missing" || err.code === "image_digest_mismatch")) return null;
      throw err;
    });
    return { runtime: this.config.runtime, imageDigest, engineVersion };
  }

  /** Starts a fresh sandbox (no content yet); for probes that need the container itself. */
  async startFresh(runId: string, purpose: SandboxRunRequest["purpose"], withControl: boolean): Promise<SandboxContainer> {
    const digest = await this.pinnedDigest();
    return SandboxContainer.start(this.docker, this.config, digest, runId, purpose, withControl, this.log);
  }

  async run(req: SandboxRunRequest): Promise<SandboxResult> {
    return this.runFresh(req);
  }

  /**
   * `run` with an observation hook: probes use `onStarted` to inspect the very
   * container the command runs in, so what they prove is this code path.
   */
  async runFresh(req: SandboxRunRequest, hooks: FreshRunHooks = {}): Promise<SandboxResult> {
    const layers = req.exportSpec?.layers ?? [];
    const env = withLayerEnv(buildExecEnv(this.config, req.env), layers);
    checkReportRequest(req.reportFile);
    refuseChangedList(req, "fresh");
    const t0 = this.now();
    let lap = t0;
    const step = (name: FreshRunStep) => {
      const t = this.now();
      hooks.onStep?.(name, t - lap);
      lap = t;
    };
    // what may leave the host is decided before anything is created
    const exported = await listExport(req.workspaceDir, req.exportSpec);
    checkExportFits(exported.entries, this.config.workspaceBytes);
    step("list_export");
    const withControl = req.controlDir !== undefined;
    const digest = await this.pinnedDigest();
    await this.layers?.check(layers);
    step("pin");
    // a pool member is made before any run asks, so it has no layer mounts: a run with layers makes its own sandbox
    const pooled = this.pool && layers.length === 0 ? await this.pool.take({ config: this.config, digest, withControl }) : null;
    // a pooled sandbox has no run label (made before the run asked): this line ties the two together
    if (pooled) this.log.info({ runId: req.runId, purpose: req.purpose, container: pooled.id, sandbox: pooled.name }, "pooled sandbox serves this run");
    const box = pooled ?? (await SandboxContainer.start(this.docker, this.config, digest, req.runId, req.purpose, withControl, this.log, layers));
    try {
      step("take");
      await hooks.beforeContent?.(box, pooled !== null);
      // over the command channel, extracted inside the sandbox (sandbox-container.ts putWorkspace)
      await box.putWorkspace(packExport(exported.entries), PUT_WORKSPACE_TIMEOUT_MS);
      step("put_workspace");
      notifyIncluded(req, exported.entries);
      if (req.controlDir !== undefined) await box.putArchive(packControl(req.controlDir), IN_IMAGE.control);
      step("put_control");
      await hooks.onStarted?.(box);
      const outcome = await box.run({
        argv: req.argv,
        env,
        timeoutMs: req.timeoutMs,
        capBytes: req.outputCapBytes ?? this.config.outputCapBytes,
        signal: req.signal,
        // a fresh sandbox is simply killed: SIGKILL to the whole container, then force-remove
        onStop: () => box.kill(),
      });
      // No status came back. When the whole sandbox died under the command (gVisor's kernel dies
      // when a fork bomb hits the pids limit; a command can kill the spawner, the container's main
      // process), that is the command's result: killed, no exit code. When the sandbox still runs,
      // the channel itself broke: a sandbox failure, never a result.
      if (outcome.spawnerLost && !outcome.oomKilled && (await box.running()) !== false) throw spawnerLostError(box.id, null);
      step("run");
      const result = toResult(outcome, this.now() - t0, box.digest, this.config.runtime);
      if (exported.linksLeftOut) result.links_left_out = exported.linksLeftOut;
      // the report is read before the box goes, and only from a command that ended by itself
      if (req.reportFile !== undefined) {
        const stopped = outcome.timedOut || outcome.cancelled || outcome.spawnerLost;
        result.report = stopped ? NOT_READ_AFTER_STOP : await readReportIn(box, req.reportFile, this.config.controlExecTimeoutMs);
      }
      step("report");
      return result;
    } finally {
      // a pooled run's removal is off its critical path; the pool waits for it when it drains
      if (pooled && this.pool) this.pool.retire(box);
      else await box.remove();
    }
  }

  async openSession(runId: string, layers: readonly DependencyLayerRef[] = []): Promise<SandboxSession> {
    const digest = await this.pinnedDigest();
    await this.layers?.check(layers);
    const session = new WarmSession({ docker: this.docker, config: this.config, digest, runId, now: this.now, log: this.log, layers });
    await session.open();
    return session;
  }
}
