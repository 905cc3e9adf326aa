import type Docker from "dockerode";
import type { Logger } from "pino";
import type { DependencyLayerRef, SandboxResult, SandboxRunRequest } from "../contracts/sandbox.js";
import { MiniAgentError } from "../errors.js";
import { buildExecEnv, type SandboxConfig } from "./config.js";
import { checkReportRequest, NOT_READ_AFTER_STOP, readReportIn } from "./report-read.js";
import { checkChangedRequest, listChangedIn, notListedAfterStop } from "./changed-list.js";
import { toResult } from "./result.js";
import type { SandboxSession } from "./executor.js";
import { IN_IMAGE } from "./host-config.js";
import { SandboxContainer, SETTLE_CLEARED, spawnerLostError } from "./sandbox-container.js";
import { checkExportFits, listExport, type ExportList } from "../workspace/index.js";
import { notifyIncluded, packExport } from "./workspace-tar.js";
import { exportManifest, planSync, type Manifest } from "./workspace-sync.js";
import { withLayerEnv } from "./dependency-layer.js";

/**
 * One warm container for one agent run. Before each exec the workspace is
 * synced in so the container's /workspace mirrors the host dir exactly,
 * deletions included: only what changed on the host goes in, as long as the
 * previous command left /workspace as it found it (the spawner's settle
 * request checks that, else empties it). The spawner kills every leftover
 * process of a command before its status comes back; settle proves none is
 * left and empties /tmp, so every command starts with an empty /tmp (but for
 * the image's own seed, which the spawner copies in afresh). If that
 * cannot be proven (settle failed, OOM, spawner lost), or the command hit its
 * deadline or was cancelled, the container is thrown away and the next exec
 * gets a new one. Execs are serialized.
 */
export class WarmSession implements SandboxSession {
  private box: SandboxContainer | null = null;
  private closed = false;
  private queue: Promise<unknown> = Promise.resolve();
  /** the clean-up after the previous exec (kill leftovers, empty /workspace); never rejects. */
  private cleanup: Promise<void> = Promise.resolve();
  /** host metadata of what the box's /workspace holds; null: it is empty (or unknown, then emptied first). */
  private synced: Manifest | null = null;

  constructor(
    private readonly o: {
      docker: Docker;
      config: SandboxConfig;
      digest: string;
      runId: string;
      now: () => number;
      log: Logger;
      /** the run's dependency layers, mounted read-only in every box of the session (fixed for the run) */
      layers?: readonly DependencyLayerRef[];
    },
  ) {}

  async open(): Promise<void> {
    this.synced = null;
    this.box = await SandboxContainer.start(this.o.docker, this.o.config, this.o.digest, this.o.runId, "session", false, this.o.log, this.o.layers ?? []);
  }

  exec(req: Omit<SandboxRunRequest, "runId">): Promise<SandboxResult> {
    const next = this.queue.then(() => this.execNow(req));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async execNow(req: Omit<SandboxRunRequest, "runId">): Promise<SandboxResult> {
    if (this.closed) throw new MiniAgentError("sandbox_error", "the sandbox session is closed");
    if (req.controlDir !== undefined) {
      // hidden acceptance assets only ever go to a fresh sandbox, never to the warm one the candidate shares
      throw new MiniAgentError("invalid_fields", "controlDir is not accepted in a warm session; use Executor.run");
    }
    const env = withLayerEnv(buildExecEnv(this.o.config, req.env), this.o.layers);
    checkReportRequest(req.reportFile);
    checkChangedRequest(req.listChanged);
    await this.cleanup;
    const t0 = this.o.now();
    if (!this.box) await this.open();
    const { box, linksLeftOut } = await this.sync(req);
    const outcome = await box.run({
      argv: req.argv,
      env,
      timeoutMs: req.timeoutMs,
      capBytes: req.outputCapBytes ?? this.o.config.outputCapBytes,
      signal: req.signal,
      // the spawner is busy waiting for this command: the whole container goes (SIGKILL), a new one comes next time
      onStop: () => this.discard(box),
    });
    const oomKilled = outcome.oomKilled;
    if (outcome.spawnerLost && !oomKilled) {
      const status = await box.exitStatus();
      await this.discard(box);
      throw spawnerLostError(box.id, status);
    }
    const result = toResult(outcome, this.o.now() - t0, box.digest, this.o.config.runtime);
    if (linksLeftOut) result.links_left_out = linksLeftOut;
    // Read BEFORE settle, which empties /tmp; the previous command's settle emptied it too
    // (or the box was replaced), so a report found here is this command's own. A command
    // stopped at its deadline or by a cancel took its box with it (onStop).
    if (req.reportFile !== undefined) {
      const stopped = outcome.timedOut || outcome.cancelled || this.box !== box;
      result.report = stopped ? NOT_READ_AFTER_STOP : await readReportIn(box, req.reportFile, this.o.config.controlExecTimeoutMs);
    }
    // Also before settle: settle may empty /workspace, and the next command starts a new
    // fingerprint. A stopped command's box is gone; an OOM'd one may still answer.
    if (req.listChanged !== undefined) {
      const stopped = outcome.timedOut || outcome.cancelled || outcome.spawnerLost || this.box !== box;
      result.changed = stopped ? notListedAfterStop(outcome) : await listChangedIn(box, req.listChanged.maxPaths, this.o.config.controlExecTimeoutMs);
    }
    // Leftover processes are killed right after the exec, off the caller's critical path;
    // the next exec and close() wait for it. An OOM'd container is replaced rather than
    // proven clean: the kernel may have killed one of the sandbox's own processes too.
    this.cleanup = (async () => {
      if (oomKilled) return this.discard(box);
      const settled = await this.settle(box);
      if (settled === "failed") await this.discard(box);
      else if (settled === "cleared") this.synced = null;
    })();
    return result;
  }

  /**
   * Brings the sandbox's /workspace to the host dir's exported content (what
   * the export rule lets out, see workspace/sandbox-export.ts). It holds
   * `synced` (or nothing) since the last command left it unchanged (settle),
   * so usually only what the host changed goes in; after a deletion it is
   * emptied and filled again. Returns the box to run in, and the links the rule left out.
   */
  private async sync(req: Omit<SandboxRunRequest, "runId">): Promise<{ box: SandboxContainer; linksLeftOut: ExportList["linksLeftOut"] }> {
    const list = await listExport(req.workspaceDir, req.exportSpec);
    checkExportFits(list.entries, this.o.config.workspaceBytes);
    const current = exportManifest(list);
    let plan = planSync(this.synced, current);
    if (plan.kind === "full" && plan.clearFirst && !(await this.clear(this.box!))) {
      await this.discard(this.box!);
      await this.open();
      plan = { kind: "full", clearFirst: false };
    }
    const box = this.box!;
    const wanted = plan.kind === "partial" ? new Set(plan.entries) : null;
    const send = plan.kind === "full" ? list.entries : wanted ? list.entries.filter((e) => wanted.has(e.rel)) : [];
    // from here until the put completes, what the sandbox holds is not known
    this.synced = null;
    try {
      if (send.length > 0) await box.putArchive(packExport(send), IN_IMAGE.workspace);
    } catch (err) {
      // half a sync leaves unknown content: this container is not reused
      await this.discard(box);
      throw err;
    }
    this.synced = current;
    notifyIncluded(req, send);
    return { box, linksLeftOut: list.linksLeftOut };
  }

  /** After a command: kill leftovers, empty /tmp; keep /workspace if the command left it unchanged, else empty it. */
  private async settle(box: SandboxContainer): Promise<"kept" | "cleared" | "failed"> {
    if (this.box !== box) return "failed";
    const o = await this.control(box, IN_IMAGE.settle);
    return o === 0 ? "kept" : o === SETTLE_CLEARED ? "cleared" : "failed";
  }

  /** Kills every leftover process, empties /tmp and /workspace (spawner request). True only when proven. */
  private async clear(box: SandboxContainer): Promise<boolean> {
    if (this.box !== box) return false;
    this.synced = null;
    return (await this.control(box, IN_IMAGE.clear)) === 0;
  }

  private async control(box: SandboxContainer, argv: readonly string[]): Promise<number | null> {
    try {
      const o = await box.control({
        argv: [...argv],
        env: [],
        timeoutMs: this.o.config.controlExecTimeoutMs,
        capBytes: 4096,
        onStop: () => box.kill(),
      });
      return o.timedOut ? null : o.exitCode;
    } catch {
      return null;
    }
  }

  private async discard(box: SandboxContainer): Promise<void> {
    if (this.box === box) this.synced = null;
    if (!this.closed) this.o.log.info({ runId: this.o.runId, container: box.id }, "warm sandbox replaced (clean-up not proven or OOM)");
    if (this.box === box) this.box = null;
    await box.kill();
    await box.remove();
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.queue;
    await this.cleanup;
    if (this.box) await this.discard(this.box);
  }
}
