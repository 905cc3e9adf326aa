import type { Budgets } from "../contracts/task-spec.js";
import { isMiniAgentError } from "../errors.js";
import type { LiveModel } from "../models/live/live-model.js";
import type { RunService } from "../runtime/service.js";
import { recordLiveRun } from "./record-run.js";

export interface LiveRunRecorderOptions {
  stateDir: string;
  /** late-bound: the service is built with the model factory that feeds this recorder */
  service: () => Pick<RunService, "getRun" | "events">;
  /** the run's budgets as stored with the run */
  budgetsOf: (runId: string) => Budgets;
  /** where write failures go; a record that cannot be written never breaks a run */
  onError?: (runId: string, err: unknown) => void;
  clock?: () => number;
  /** long-poll slice; close() is noticed at the latest after this long */
  pollMs?: number;
}

export interface LiveRunRecorder {
  /** Follow this run until its next run_stopped, then write its record. Idempotent per run. */
  watch(runId: string, model: Pick<LiveModel, "facts" | "redactionSecrets">): void;
  /** resolves when every watch has ended; call on daemon shutdown */
  close(): Promise<void>;
  /** resolves when the current watch of this run (if any) has written its record or ended */
  settled(runId: string): Promise<void>;
}

/**
 * Writes a live run's record when the run stops, by following the run's trace
 * (the runtime's one account of what happened) rather than by a hook inside the
 * loop: the runtime stays unaware of live records. Every drive segment of a run
 * (start, after an approval, after a resume) comes through the live model
 * factory, which calls watch(); a segment that ends with run_stopped (completed,
 * failed, cancelled, budget_exhausted, interrupted, uncertain) leaves one record.
 * A pause for approval is not a stop.
 */
export function createLiveRunRecorder(opts: LiveRunRecorderOptions): LiveRunRecorder {
  const watches = new Map<string, { model: Pick<LiveModel, "facts" | "redactionSecrets">; done: Promise<void> }>();
  let closed = false;
  const pollMs = opts.pollMs ?? 5_000;

  async function startSeq(runId: string): Promise<number> {
    // createRun calls the factory BEFORE the run row exists: then the trace starts at 0
    try {
      return opts.service().getRun(runId).last_seq;
    } catch (err) {
      if (isMiniAgentError(err, "run_not_found")) return 0;
      throw err;
    }
  }

  async function follow(runId: string): Promise<void> {
    let seq = await startSeq(runId);
    // a createRun that failed after the factory ran never inserts the row: give up after ~10 s
    let missing = 0;
    while (!closed) {
      let events;
      try {
        events = await opts.service().events(runId, seq, pollMs);
      } catch (err) {
        if (!isMiniAgentError(err, "run_not_found")) throw err;
        if (++missing > 200) return;
        await new Promise((r) => setTimeout(r, 50)); // the row is being inserted
        continue;
      }
      for (const e of events) {
        seq = Math.max(seq, e.seq);
        if (e.type !== "run_stopped") continue;
        const w = watches.get(runId)!;
        await recordLiveRun({
          stateDir: opts.stateDir,
          service: opts.service(),
          runId,
          model: w.model,
          budgets: opts.budgetsOf(runId),
          ...(opts.clock ? { clock: opts.clock } : {}),
        });
        return;
      }
    }
  }

  return {
    watch(runId, model) {
      const existing = watches.get(runId);
      if (existing) {
        existing.model = model;
        return;
      }
      const entry = { model, done: Promise.resolve() };
      watches.set(runId, entry);
      entry.done = follow(runId)
        .catch((err) => opts.onError?.(runId, err))
        .finally(() => {
          if (watches.get(runId) === entry) watches.delete(runId);
        });
    },
    async settled(runId) {
      await watches.get(runId)?.done;
    },
    async close() {
      closed = true;
      await Promise.all([...watches.values()].map((w) => w.done));
    },
  };
}
