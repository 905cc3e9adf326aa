import type Docker from "dockerode";
import type { Logger } from "pino";
import type { SandboxResult, SandboxRunRequest } from "../contracts/sandbox.js";
import { MiniAgentError } from "../errors.js";
import { buildExecEnv, type SandboxConfig } from "./config.js";
import { toResult } from "./result.js";
import type { SandboxSession } from "./executor.js";
import { IN_IMAGE } from "./host-config.js";
import { SandboxContainer } from "./sandbox-container.js";
import { packWorkspace } from "./workspace-tar.js";

/**
 * One warm container for one agent run. Before each exec the workspace is
 * synced in (the container's /workspace was emptied after the previous exec,
 * so it mirrors the host dir exactly, deletions included); after each exec
 * every leftover process is SIGKILLed. If that clean-up cannot be proven
 * (reset failed, processes remain, OOM), the container is thrown away and the
 * next exec gets a new one. Execs are serialized.
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
      onStop: async () => {
        if (!(await this.reset(box, false))) await this.discard(box);
      },
    });
    const oomKilled = await box.oomKilledSince(startedAt, this.o.epochMs, outcome);
    const result = toResult({ ...outcome, oomKilled }, this.o.now() - t0, box.digest, this.o.config.runtime);
    // Leftover processes are killed right after the exec, off the caller's critical path;
    // the next exec and close() wait for it. An OOM'd container is replaced so the next
    // exec's report is its own.
    this.cleanup = (async () => {
      if (oomKilled || !(await this.reset(box, true))) await this.discard(box);
    })();
    return result;
  }

  /** Kills every leftover process (and with `clear`, empties /workspace). True only when proven. */
  private async reset(box: SandboxContainer, clear: boolean): Promise<boolean> {
    if (this.box !== box) return false;
    try {
      const o = await box.exec({
        argv: [...IN_IMAGE.reset, ...(clear ? ["--clear"] : [])],
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
