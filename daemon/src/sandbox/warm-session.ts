import type Docker from "dockerode";
import type { Logger } from "pino";
import type { SandboxResult, SandboxRunRequest } from "../contracts/sandbox.js";
import { MiniAgentError } from "../errors.js";
import { buildExecEnv, type SandboxConfig } from "./config.js";
import { toResult } from "./result.js";
import type { SandboxSession } from "./executor.js";
import { IN_IMAGE } from "./host-config.js";
import { SandboxContainer, spawnerLostError } from "./sandbox-container.js";
import { packWorkspace } from "./workspace-tar.js";

/**
 * One warm container for one agent run. Before each exec the workspace is
 * synced in (the container's /workspace was emptied after the previous exec,
 * so it mirrors the host dir exactly, deletions included). The spawner kills
 * every leftover process of a command before its status comes back; the
 * clear request afterwards proves none is left and empties /workspace. If
 * that cannot be proven (clear failed, OOM, spawner lost), or the command hit
 * its deadline or was cancelled, the container is thrown away and the next
 * exec gets a new one. Execs are serialized.
 */
export class WarmSession implements SandboxSession {
  private box: SandboxContainer | null = null;
  private closed = false;
  private queue: Promise<unknown> = Promise.resolve();
  /** the clean-up after the previous exec (kill leftovers, empty /workspace); never rejects. */
  private cleanup: Promise<void> = Promise.resolve();

  constructor(
    private readonly o: { docker: Docker; config: SandboxConfig; digest: string; runId: string; now: () => number; epochMs: () => number; log: Logger },
  ) {}

  async open(): Promise<void> {
    this.box = await SandboxContainer.start(this.o.docker, this.o.config, this.o.digest, this.o.runId, "session", false, this.o.log);
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
    const env = buildExecEnv(this.o.config, req.env);
    await this.cleanup;
    const t0 = this.o.now();
    const startedAt = this.o.epochMs();
    if (!this.box) await this.open();
    const box = this.box!;
    await box.putArchive(packWorkspace(req.workspaceDir), IN_IMAGE.workspace);
    const outcome = await box.exec({
      argv: req.argv,
      env,
      timeoutMs: req.timeoutMs,
      capBytes: req.outputCapBytes ?? this.o.config.outputCapBytes,
      signal: req.signal,
      // the spawner is busy waiting for this command: the whole container goes (SIGKILL), a new one comes next time
      onStop: () => this.discard(box),
    });
    const oomKilled = await box.oomKilledSince(startedAt, this.o.epochMs, outcome);
    if (outcome.spawnerLost && !oomKilled) {
      await this.discard(box);
      throw spawnerLostError(box.id);
    }
    const result = toResult({ ...outcome, oomKilled }, this.o.now() - t0, box.digest, this.o.config.runtime);
    // Leftover processes are killed right after the exec, off the caller's critical path;
    // the next exec and close() wait for it. An OOM'd container is replaced so the next
    // exec's report is its own.
    this.cleanup = (async () => {
      if (oomKilled || !(await this.clear(box))) await this.discard(box);
    })();
    return result;
  }

  /** Kills every leftover process and empties /workspace (spawner request). True only when proven. */
  private async clear(box: SandboxContainer): Promise<boolean> {
    if (this.box !== box) return false;
    try {
      const o = await box.exec({
        argv: [...IN_IMAGE.clear],
        control: true,
        env: [],
        timeoutMs: this.o.config.controlExecTimeoutMs,
        capBytes: 4096,
        onStop: () => box.kill(),
      });
      return o.exitCode === 0;
    } catch {
      return false;
    }
  }

  private async discard(box: SandboxContainer): Promise<void> {
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
