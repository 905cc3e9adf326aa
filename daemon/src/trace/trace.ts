import type { EventType } from "../contracts/run.js";
import type { TraceEvent } from "../runtime/service.js";
import type { Ledger } from "../store/ledger.js";

export interface EventInput {
  type: EventType;
  call_id?: string | null;
  action_id?: string | null;
  payload?: Record<string, unknown>;
}

/**
 * The append-only event log of every run. Events go into the ledger (redacted,
 * with the next seq) in the caller's transaction; waiters for a run are woken
 * after the append so long-polls see events as they happen.
 */
export class Trace {
  private readonly waiters = new Map<string, Set<() => void>>();

  constructor(
    private readonly ledger: Ledger,
    private readonly now: () => number,
  ) {}

  append(runId: string, e: EventInput): number {
    const seq = this.ledger.appendEvent(runId, e, this.now());
    const set = this.waiters.get(runId);
    if (set)
      queueMicrotask(() => {
        for (const wake of set) wake();
      });
    return seq;
  }

  since(runId: string, sinceSeq: number): TraceEvent[] {
    return this.ledger.listEvents(runId, sinceSeq).map(({ seq, type, call_id, action_id, payload }) => ({ seq, type, call_id, action_id, payload }));
  }

  /** Events after sinceSeq; when there are none yet, waits up to waitMs for the next append. */
  async wait(runId: string, sinceSeq: number, waitMs: number): Promise<TraceEvent[]> {
    const now = this.since(runId, sinceSeq);
    if (now.length > 0 || waitMs <= 0) return now;
    await new Promise<void>((resolve) => {
      const set = this.waiters.get(runId) ?? new Set();
      this.waiters.set(runId, set);
      const done = () => {
        clearTimeout(timer);
        set.delete(done);
        if (set.size === 0) this.waiters.delete(runId);
        resolve();
      };
      const timer = setTimeout(done, waitMs);
      set.add(done);
    });
    return this.since(runId, sinceSeq);
  }

  /** Wake every waiter (shutdown). */
  wakeAll(): void {
    for (const set of this.waiters.values()) for (const wake of set) wake();
  }
}
