import type { Budgets } from "../contracts/task-spec.js";
import type { LiveModel } from "../models/live/live-model.js";
import type { RunService } from "../runtime/service.js";
import { buildLiveRunRecord } from "./record.js";
import { writeLiveRunRecord } from "./write.js";

export interface RecordLiveRunInput {
  stateDir: string;
  service: Pick<RunService, "getRun" | "events">;
  runId: string;
  model: Pick<LiveModel, "facts" | "redactionSecrets">;
  budgets: Budgets;
  /** epoch ms; injected for tests */
  clock?: () => number;
}

/**
 * Call when a live run stops (completed, failed, cancelled, uncertain,
 * budget_exhausted): reads the run and its whole trace and writes one record.
 * Returns the record's path.
 */
export async function recordLiveRun(input: RecordLiveRunInput): Promise<string> {
  const run = input.service.getRun(input.runId);
  const events = await input.service.events(input.runId, 0, 0);
  const facts = input.model.facts();
  const record = buildLiveRunRecord({
    run,
    events,
    budgets: input.budgets,
    model: facts.model,
    providerHost: facts.providerHost,
    mode: facts.mode,
    recordedAt: new Date((input.clock ?? Date.now)()),
    isolationReportGeneratedAt: facts.isolationReportGeneratedAt,
  });
  return writeLiveRunRecord(input.stateDir, record, input.model.redactionSecrets());
}
