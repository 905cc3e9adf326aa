import crypto from "node:crypto";
import type Docker from "dockerode";
import { pino, type Logger } from "pino";
import type { DependencyLayerRef } from "../contracts/sandbox.js";
import { MiniAgentError } from "../errors.js";
import type { SandboxConfig } from "./config.js";
import { AttachChannel } from "./attach-channel.js";
import type { ExecOutcome, ExecSpec, RunOutcome } from "./exec-outcome.js";
import { containerSpec, IN_IMAGE } from "./host-config.js";
import { forceRemove } from "./force-remove.js";
import { engineError } from "./image-pin.js";
import { labelFilter, PURPOSE_LABEL, RUN_LABEL, SANDBOX_LABEL, sandboxLabels, type Purpose } from "./labels.js";
import { OomWatch } from "./oom-watch.js";
import { CappedOutput } from "./output.js";

/** `run --settle` exit code: a command changed /workspace, so it was emptied (spawn-proto.h). */
export const SETTLE_CLEARED = 3;

const SILENT = pino({ level: "silent" });

/** after a kill, how long a control exec's stream may take to end before it is cut. */
const STOP_GRACE_MS = 5_000;
/** after the container died, how long a control exec's stream may take to end by itself before it is cut. */
const DIED_GRACE_MS = 1_000;

function shortId(runId: string): string {
  return `${runId.replace(/[^A-Za-z0-9_.-]/g, "_").slice(0, 40)}-${crypto.randomBytes(4).toString("hex")}`;
}

/**
 * One started sandbox container with its own size-capped tmpfs volumes and
 * its command channel (one attach to the spawner). Lifecycle: `start()` gives
 * a running, attached container (or removes everything it made and throws);
 * `remove()` is idempotent and never throws.
 */
export class SandboxContainer {
  private removed = false;
  private constructor(
    private readonly docker: Docker,
    readonly container: Docker.Container,
    /** the container's name, also its volumes' SANDBOX_LABEL value */
    readonly name: string,
    private readonly channel: AttachChannel,
    readonly digest: string,
    private readonly log: Logger,
  ) {}

  get id(): string {
    return this.container.id;
  }

  static async start(
    docker: Docker,
    config: SandboxConfig,
    digest: string,
    runId: string,
    purpose: Purpose,
    withControl: boolean,
    log: Logger = SILENT,
    layers: readonly DependencyLayerRef[] = [],
  ): Promise<SandboxContainer> {
    return SandboxContainer.startLabelled(docker, config, digest, runId, sandboxLabels(runId, purpose, config.instance), withControl, log, layers);
  }

  /**
   * `start` with the caller's labels (a pool member has no run yet: sandbox-pool.ts);
   * the container name is made from `nameHint`, its SANDBOX_LABEL added here.
   */
  static async startLabelled(
    docker: Docker,
    config: SandboxConfig,
    digest: string,
    nameHint: string,
    baseLabels: Record<string, string>,
    withControl: boolean,
    log: Logger = SILENT,
    layers: readonly DependencyLayerRef[] = [],
    /** mounts beyond the sandbox's own (the install sandbox's egress socket and tools: install-sandbox.ts) */
    extraMounts: readonly Docker.MountSettings[] = [],
  ): Promise<SandboxContainer> {
    const name = `mini-agent-${shortId(nameHint)}`;
    const labels = { ...baseLabels, [SANDBOX_LABEL]: name };
    const purpose = baseLabels[PURPOSE_LABEL];
    const runId = baseLabels[RUN_LABEL];
    let container: Docker.Container | undefined;
    try {
      const spec = containerSpec(config, digest, labels, withControl, layers);
      spec.HostConfig!.Mounts = [...(spec.HostConfig!.Mounts ?? []), ...extraMounts];
      container = await docker.createContainer({ ...spec, name });
      // tmpfs volumes only hold data while mounted, so content goes in after start (putArchive).
      await container.start();
      const channel = await AttachChannel.open(docker, container);
      log.debug({ runId, purpose, container: container.id }, "sandbox started");
      return new SandboxContainer(docker, container, name, channel, digest, log);
    } catch (err) {
      if (container) await removeWithVolumes(docker, container, name, log);
      throw engineError(err);
    }
  }

  async putArchive(tarStream: NodeJS.ReadableStream, dest: string): Promise<void> {
    try {
      await this.container.putArchive(tarStream as never, { path: dest, noOverwriteDirNonDir: "true" });
    } catch (err) {
      throw engineError(err);
    }
  }

  /**
   * The workspace's tar into /workspace over the command channel: the spawner
   * extracts it as the sandbox user (helper/untar.h), where putArchive had the
   * engine do it as root, re-executing dockerd per call (most of a pooled run's
   * overhead). A refusal or a broken channel leaves the sandbox unusable: the
   * caller removes it. A tar that fails on the host rejects with its own error.
   */
  async putWorkspace(tar: NodeJS.ReadableStream, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    const outcome = await this.channel.put(tar, { timeoutMs, capBytes: 4096, signal, onStop: () => this.kill() });
    if (outcome.exitCode === 0) return;
    const why = outcome.timedOut
      ? `did not finish within ${timeoutMs} ms`
      : outcome.cancelled
        ? "was cancelled"
        : outcome.exitCode === null
          ? "lost the sandbox's command channel"
          : outcome.stderr.replace(/^mini-agent-spawner: /, "").trim() || `failed with status ${outcome.exitCode}`;
    throw new MiniAgentError("sandbox_error", `copying the workspace into the sandbox ${why}`, {
      details: { container: this.id, status: outcome.exitCode },
    });
  }

  /**
   * Runs argv as a child of the spawner in /workspace (one request on the attach
   * channel), with what the kernel says about the limits it ran into.
   */
  async run(spec: ExecSpec): Promise<RunOutcome> {
    const oom = await OomWatch.start(this.docker, this.container);
    let outcome;
    try {
      outcome = await this.channel.run({ ...spec, cwd: IN_IMAGE.workspace });
    } catch (err) {
      oom.close();
      throw err;
    }
    return { ...outcome, oomKilled: await oom.verdict(outcome) };
  }

  /**
   * Runs a bookkeeping command of the image (argv is a full in-image command,
   * e.g. `run --settle`) via exec, draining both streams into a capped
   * buffer. On deadline/abort `onStop` kills it. Candidate commands never go
   * this way (see `run`).
   */
  async control(spec: ExecSpec): Promise<ExecOutcome> {
    const out = new CappedOutput(spec.capBytes);
    let timedOut = false;
    let cancelled = false;
    let stopping: Promise<void> | null = null;
    let containerDied = false;
    let streamBroken = false;
    const stop = (why: "timeout" | "cancel") => {
      if (why === "timeout") timedOut = true;
      else cancelled = true;
      stopping ??= spec.onStop(why).catch(() => undefined);
    };
    if (spec.signal?.aborted) {
      return { exitCode: null, timedOut: false, cancelled: true, truncated: false, stdout: "", stderr: "", spawnerLost: false };
    }
    let exec: Docker.Exec;
    let stream: NodeJS.ReadWriteStream;
    try {
      exec = await this.container.exec({
        Cmd: spec.argv,
        Env: spec.env,
        WorkingDir: IN_IMAGE.workspace,
        AttachStdout: true,
        AttachStderr: true,
        AttachStdin: false,
        Tty: false,
      });
      stream = (await exec.start({ hijack: true, stdin: false })) as NodeJS.ReadWriteStream;
    } catch (err) {
      throw engineError(err);
    }
    // if the whole container dies (gVisor OOM, external kill), the exec stream may never end: watch it
    const watch = new AbortController();
    const died: Promise<boolean> = (this.container.wait({ condition: "not-running", abortSignal: watch.signal } as never) as unknown as Promise<unknown>).then(
      () => true,
      () => false,
    );
    const onAbort = () => stop("cancel");
    spec.signal?.addEventListener("abort", onAbort, { once: true });
    const timer = setTimeout(() => stop("timeout"), spec.timeoutMs);
    try {
      await new Promise<void>((resolve) => {
        this.docker.modem.demuxStream(stream, out.stdout, out.stderr);
        stream.on("end", resolve);
        stream.on("close", resolve);
        stream.on("error", () => {
          // the engine connection broke mid-stream: what we kept may be incomplete
          streamBroken = true;
          resolve();
        });
        // once stopped, the stream must end soon; if something still holds it open, stop waiting.
        const guard = () => {
          void stopping?.then(() => setTimeout(() => (stream as unknown as { destroy(): void }).destroy(), STOP_GRACE_MS).unref());
        };
        spec.signal?.addEventListener("abort", guard, { once: true });
        setTimeout(guard, spec.timeoutMs).unref();
        void died.then((dead) => {
          if (dead) {
            containerDied = true;
            setTimeout(() => (stream as unknown as { destroy(): void }).destroy(), DIED_GRACE_MS).unref();
          }
        });
      });
    } finally {
      watch.abort();
      clearTimeout(timer);
      spec.signal?.removeEventListener("abort", onAbort);
    }
    if (stopping) await stopping;
    let exitCode: number | null = null;
    if (!timedOut && !cancelled && !containerDied) {
      const info = await exec.inspect().catch(() => null);
      exitCode = info && !info.Running && typeof info.ExitCode === "number" ? info.ExitCode : null;
    }
    return {
      exitCode,
      timedOut,
      cancelled,
      truncated: out.truncated || streamBroken,
      stdout: out.text("stdout"),
      stderr: out.text("stderr"),
      stdoutBytes: out.bytes("stdout"),
      spawnerLost: containerDied,
    };
  }

  async inspect(): Promise<Docker.ContainerInspectInfo> {
    try {
      return await this.container.inspect();
    } catch (err) {
      throw engineError(err);
    }
  }

  /** Is the container still running? null when the engine cannot say. */
  async running(): Promise<boolean | null> {
    return this.container.inspect().then(
      (i) => i.State?.Running === true,
      () => null,
    );
  }

  /** The container's exit status once it stopped; null while it runs or when the engine cannot say. */
  async exitStatus(): Promise<number | null> {
    return this.container.inspect().then(
      (i) => (i.State?.Running === false && typeof i.State.ExitCode === "number" ? i.State.ExitCode : null),
      () => null,
    );
  }

  async kill(): Promise<void> {
    await this.container.kill({ signal: "SIGKILL" }).catch(() => undefined);
  }

  /** Force-removes the container and its volumes; safe to call twice; never throws. */
  async remove(): Promise<void> {
    if (this.removed) return;
    this.removed = true;
    this.channel.destroy();
    await removeWithVolumes(this.docker, this.container, this.name, this.log);
  }
}

/**
 * Force-removes a sandbox container with its anonymous volumes (`v: true`),
 * then makes sure none of them is left: they carry the sandbox's own label,
 * so any the engine did not remove (it logs and goes on) is found and removed
 * here. Never throws; what still fails is left to the start-up reaper.
 */
async function removeWithVolumes(docker: Docker, container: Docker.Container, name: string, log: Logger): Promise<void> {
  const refused = await forceRemove(container, { withVolumes: true });
  if (refused !== null) log.warn({ container: container.id, refused }, "sandbox container could not be removed; the start-up reaper will retry");
  const left = await docker
    .listVolumes({ filters: { label: [labelFilter(SANDBOX_LABEL, name)] } })
    .then((r) => (r.Volumes ?? []).map((v) => v.Name))
    .catch(() => [] as string[]);
  for (const v of left) {
    const volumeRefused = await forceRemove(docker.getVolume(v));
    if (volumeRefused !== null)
      log.warn({ volume: v, container: container.id, refused: volumeRefused }, "sandbox volume could not be removed; the start-up reaper will retry");
  }
}

/**
 * The spawner (the container's main process) vanished mid-command: the sandbox
 * failed, not the test. Says what the engine knows: whether the sandbox itself
 * stopped, and with which status (under gVisor a fork bomb that exhausts the pids
 * limit ends the sandbox's own kernel, status 2; a killed spawner ends it with 137).
 */
export function spawnerLostError(container: string, exitStatus: number | null): MiniAgentError {
  const what =
    exitStatus === null
      ? "the sandbox's command channel was lost before the command's status came back"
      : `the sandbox stopped (exit status ${exitStatus}) before the command's status came back`;
  return new MiniAgentError("sandbox_error", `${what}; the next command gets a new sandbox`, { details: { container, sandbox_exit_status: exitStatus } });
}
