import { z } from "zod";
import { Id, SchemaVersion } from "../contracts/common.js";
import { RunStatus } from "../contracts/run.js";
import { SandboxLimit } from "../contracts/sandbox.js";
import { TEST_LIST_NAMES } from "../contracts/run-view.js";
import { readTraceEvent } from "../contracts/trace-event.js";
import { Budgets } from "../contracts/task-spec.js";
import type { RunView, TraceEvent } from "../runtime/service.js";

/**
 * The record of one live run (issue 6): what a reader needs to judge a live
 * model's run without the ledger, and nothing that could leak: the provider's
 * HOST only (never the URL path, query or key), no workspace path, no message
 * or file content, no tool arguments. Strict, so a field added by mistake is
 * refused at write time rather than published.
 */
const Count = z.int().min(0);

export const LiveRunVerification = z.strictObject({
  passed: z.boolean(),
  reason: z.string().max(2048).nullable(),
  workspace_digest: z.string().max(128),
  protected_paths_changed: z.array(z.string().max(512)).max(256),
  tests: z.strictObject({
    discovered: Count,
    passed: Count,
    failed: Count,
    exit_code: z.int().nullable(),
    timed_out: z.boolean(),
    truncated: z.boolean(),
    /** the limits the candidate tests ran into and the signal that ended their runner (contracts/run-view.ts) */
    limits: z.array(SandboxLimit).max(8).optional(),
    runner_signal: z.string().max(32).nullable().optional(),
    /** the verify preset had no test count, only an exit status (contracts/run-view.ts) */
    exit_code_only: z.boolean().optional(),
    skipped: Count.optional(),
    /** how many tests fell in each list of the comparison with the baseline; counts only, never test ids or output */
    // partial: a record written before a list existed (`unstable`) still reads; every name it has is still checked
    against_baseline: z.partialRecord(z.enum(TEST_LIST_NAMES), Count).optional(),
  }),
  acceptance: z.strictObject({ passed: z.array(z.string().max(128)), failed: z.array(z.string().max(128)), error: z.string().max(2048).nullable() }).nullable(),
});

export const LiveRunRecord = z.strictObject({
  schema_version: SchemaVersion,
  kind: z.literal("live_run"),
  run_id: Id,
  model: z.string().min(1).max(256),
  provider_host: z.string().min(1).max(256),
  mode: z.enum(["tools", "json"]),
  /** ISO-8601, when this record was written */
  recorded_at: z.iso.datetime(),
  /** ISO-8601 date of the isolation report the gate accepted, when known */
  isolation_report_generated_at: z.iso.datetime({ offset: true }).nullable(),
  status: RunStatus,
  reason: z.string().max(2048).nullable(),
  budgets: Budgets,
  turns: Count,
  tool_calls: Count,
  writes: Count,
  elapsed_ms: Count,
  tool_calls_by_name: z.record(z.string().max(64), Count),
  approvals: z.strictObject({ asked: Count, approved: Count, rejected: Count }),
  model_retries: Count,
  usage: z.strictObject({ prompt_tokens: Count, completion_tokens: Count }),
  verification: LiveRunVerification.nullable(),
});
export type LiveRunRecord = z.infer<typeof LiveRunRecord>;

export interface LiveRunFacts {
  run: RunView;
  /** the run's whole trace, oldest first (RunService.events(runId, 0, 0)) */
  events: readonly TraceEvent[];
  budgets: Budgets;
  model: string;
  providerHost: string;
  mode: "tools" | "json";
  recordedAt: Date;
  isolationReportGeneratedAt: string | null;
}

/** Pure: facts in, record out. Counting comes from the trace, the one append-only account of the run. */
export function buildLiveRunRecord(f: LiveRunFacts): LiveRunRecord {
  const byName: Record<string, number> = {};
  let asked = 0;
  let approved = 0;
  let rejected = 0;
  let retries = 0;
  for (const raw of f.events) {
    // a type or payload shape this version does not know is not counted (contracts/trace-event.ts readTraceEvent)
    const e = readTraceEvent(raw);
    if (e === null) continue;
    if (e.type === "tool_proposed") {
      const name = e.payload.name.slice(0, 64);
      byName[name] = (byName[name] ?? 0) + 1;
    } else if (e.type === "approval_requested") {
      asked++;
    } else if (e.type === "approval_recorded") {
      if (e.payload.decision === "approved") approved++;
      else if (e.payload.decision === "rejected") rejected++;
    } else if (e.type === "model_retry") {
      retries++;
    }
  }
  const v = f.run.verification;
  return {
    schema_version: 1,
    kind: "live_run",
    run_id: f.run.run_id,
    model: f.model,
    provider_host: f.providerHost,
    mode: f.mode,
    recorded_at: f.recordedAt.toISOString(),
    isolation_report_generated_at: f.isolationReportGeneratedAt,
    status: f.run.status,
    reason: f.run.reason,
    budgets: f.budgets,
    turns: f.run.counters.model_turns,
    tool_calls: f.run.counters.tool_calls,
    writes: f.run.counters.writes,
    elapsed_ms: f.run.counters.elapsed_ms,
    tool_calls_by_name: byName,
    approvals: { asked, approved, rejected },
    model_retries: retries,
    usage: { prompt_tokens: f.run.counters.prompt_tokens, completion_tokens: f.run.counters.completion_tokens },
    verification:
      v === null
        ? null
        : {
            passed: v.passed,
            reason: v.reason,
            workspace_digest: v.workspace_digest,
            protected_paths_changed: v.protected_paths_changed,
            tests: liveTests(v.tests),
            acceptance: v.acceptance,
          },
  };
}

/**
 * The Verifier's test figures as a live record may publish them: counts, never the
 * per-test ids or the runner's own lines the evidence also holds (they come from
 * the workspace and from code under test).
 */
function liveTests(t: NonNullable<RunView["verification"]>["tests"]): z.infer<typeof LiveRunVerification>["tests"] {
  const { compare, runner_error: _lines, ...figures } = t;
  if (!compare) return figures;
  const counts = Object.fromEntries(TEST_LIST_NAMES.map((n) => [n, compare.counts[n] ?? 0])) as Record<(typeof TEST_LIST_NAMES)[number], number>;
  return { ...figures, against_baseline: counts };
}
