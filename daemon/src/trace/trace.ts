import { checkTracePayload, type TraceEventInput } from "../contracts/trace-event.js";
import { MiniAgentError } from "../errors.js";
import type { TraceEvent } from "../runtime/service.js";
import type { Ledger } from "../store/ledger.js";
import type { TraceContentInput, TraceFileWriter } from "./trace-file.js";

/** An event to append: its payload typed by its type (contracts/trace-event.ts), plus what only the trace file keeps. */
export type EventInput = TraceEventInput & {
  /** the step's model text or observation: for the trace file only, the ledger ignores it */
  content?: TraceContentInput;
};

/**
 * The append-only event log of every run. Events go into the ledger (redacted,
 * with the next seq) in the caller's transaction; waiters for a run are woken
 * after the append so long-polls see events as they happen. With a trace file,
 * each event's line is written once its transaction commits (never for one that
 * rolls back).
 */
export class Trace {
  private readonly waiters = new Map<string, Set<() => void>>();

  constructor(
    private readonly ledger: Ledger,
    private readonly now: () => number,
    private readonly file: TraceFileWriter | null = null,
  ) {}

  /**
   * Throws MiniAgentError("internal") when the payload does not fit its type's
   * schema, before anything is stored: a trace never holds an event its readers
   * could not parse, and the caller's transaction rolls back whole.
   */
  append(runId: string, e: EventInput): number {
    const { content, ...event } = e;
    const checked = checkTracePayload(event.type, event.payload);
    if (!checked.ok) throw new MiniAgentError("internal", `trace event ${event.type} does not fit its schema: ${checked.error}`);
    const seq = this.ledger.appendEvent(runId, event, this.now());
    const file = this.file;
    if (file) this.ledger.afterCommit(() => file.write(runId, seq, content));
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

  /** Release the trace files' descriptors (shutdown). */
  closeFiles(): void {
    this.file?.closeAll();
  }
}
