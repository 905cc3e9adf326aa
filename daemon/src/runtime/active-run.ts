import type { Model } from "../models/model.js";
import type { Executor, SandboxSession } from "../sandbox/executor.js";
import type { ToolContext } from "../tools/context.js";
import type { Clock } from "./ports.js";

/**
 * The in-memory half of a run while this process drives it: the abort signal,
 * the model, the warm sandbox and the time segment being spent. Everything that
 * must survive a crash is in the ledger instead.
 */
export class ActiveRun {
  readonly abort = new AbortController();
  /** why the signal fired: a user's cancel ends the run; a daemon shutdown leaves it resumable */
  abortReason: "cancel" | "shutdown" | null = null;
  private session: Promise<SandboxSession> | null = null;
  private readonly segmentStart: number;

  /** what compaction left out at the last turn, so history_compaction is traced once per change */
  lastCompaction: string | null = null;
  /** set before the run is driven; a live model may take a moment to build */
  model: Model | null = null;

  constructor(
    readonly runId: string,
    readonly executor: Executor,
    readonly ctx: ToolContext,
    readonly acceptanceDir: string | null,
    private readonly clock: Clock,
    private readonly baseElapsedMs: number,
  ) {
    this.segmentStart = clock.now();
  }

  /** Budget time used: what earlier segments persisted plus this one so far. */
  elapsedMs(): number {
    return this.baseElapsedMs + Math.max(0, this.clock.now() - this.segmentStart);
  }

  abortFor(reason: "cancel" | "shutdown"): void {
    this.abortReason ??= reason;
    this.abort.abort();
  }

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  warmSession(): Promise<SandboxSession> {
    this.session ??= this.executor.openSession(this.runId, this.ctx.dependencyLayers ?? []);
    return this.session;
  }

  /** Must not throw: called on every stop path. */
  async closeSession(): Promise<void> {
    const s = this.session;
    this.session = null;
    if (!s) return;
    try {
      await (await s).close();
    } catch {
      // a session that failed to open or close leaves nothing for us to undo; the reaper owns leftovers
    }
  }
}
