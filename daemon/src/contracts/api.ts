import { z } from "zod";
import { Id } from "./common.js";
import { EventType, RunStatus } from "./run.js";
import { Backend, Runtime, SandboxInclude } from "./sandbox.js";
import { Budgets, TaskSpec } from "./task-spec.js";
import { ERROR_CODES } from "../errors.js";

/**
 * The daemon/client protocol (/v1), one source of truth for both sides.
 * Requests are strict: an unknown field is a 400, never silently dropped.
 * Responses are a discriminated union on `kind` so the client can parse any
 * answer with one schema and branch on it.
 */
export const API_VERSION = "v1" as const;

const AbsPath = z
  .string()
  .min(1)
  .max(4096)
  .refine((p) => p.startsWith("/"), "must be an absolute path (the client resolves relative paths against its own cwd)")
  .refine((p) => !p.includes("\0"), "must not contain NUL");

export const CreateRunRequest = z
  .strictObject({
    workspace: AbsPath,
    fixture_dir: AbsPath.optional(),
    task_spec: TaskSpec.optional(),
    control_dir: AbsPath.optional(),
    model: z.enum(["replay", "live"]).default("replay"),
    replay_path: AbsPath.optional(),
    trust_replay_file: z.boolean().default(false),
    backend: Backend.default("container"),
    budgets: Budgets.partial().optional(),
    /** forbidden paths the run's sandboxes may still see (`--sandbox-include`); read_file keeps refusing them */
    sandbox_include: SandboxInclude.default([]),
  })
  .refine((r) => (r.fixture_dir === undefined) !== (r.task_spec === undefined), {
    message: "give exactly one of fixture_dir or task_spec",
    path: ["fixture_dir"],
  })
  .refine((r) => !(r.fixture_dir !== undefined && r.control_dir !== undefined), {
    message: "control_dir comes from the fixture; give it only with task_spec",
    path: ["control_dir"],
  });
export type CreateRunRequest = z.infer<typeof CreateRunRequest>;

export const RejectRequest = z.strictObject({ reason: z.string().min(1).max(2048) });
export const ResumeRequest = z.strictObject({ budgets: Budgets.partial().optional() });
/** approve and cancel take no body; an empty object (or no body) is the only valid one */
export const EmptyRequest = z.strictObject({});

export const RunIdParam = Id;
export const ActionIdParam = Id;

export const EventsQuery = z.strictObject({
  since: z.coerce.number().int().min(0).default(0),
  wait_ms: z.coerce.number().int().min(0).max(60_000).default(0),
});

export const ProbeRequest = z.strictObject({ runtime: Runtime.optional() });

// ---- response bodies -------------------------------------------------------
// Response objects use z.object (unknown keys dropped, not refused) so an older
// client keeps working when the daemon adds a field; requests stay strict.

export const PendingActionView = z.object({
  action_id: z.string(),
  call_id: z.string(),
  tool: z.string(),
  path: z.string(),
  diff: z.string(),
  why: z.string().nullable(),
});

const TestCounts = z.object({ discovered: z.number(), passed: z.number(), failed: z.number() });

export const VerificationView = z.object({
  workspace_digest: z.string(),
  protected_paths_changed: z.array(z.string()),
  tests: z.object({ discovered: z.number(), passed: z.number(), failed: z.number() }),
  acceptance: z.object({ passed: z.array(z.string()), failed: z.array(z.string()), error: z.string().nullable() }).nullable(),
  passed: z.boolean(),
  reason: z.string().nullable(),
});

export const RunViewSchema = z.object({
  run_id: z.string(),
  status: RunStatus,
  reason: z.string().nullable(),
  task: z.string(),
  workspace: z.string(),
  model: z.enum(["replay", "live"]),
  backend: Backend,
  counters: z.object({
    model_turns: z.number(),
    tool_calls: z.number(),
    writes: z.number(),
    elapsed_ms: z.number(),
    prompt_tokens: z.number(),
    completion_tokens: z.number(),
  }),
  last_tool: z.string().nullable(),
  tests: TestCounts.nullable(),
  pending_action: PendingActionView.nullable(),
  verification: VerificationView.nullable(),
  last_seq: z.number(),
});
export type RunViewBody = z.infer<typeof RunViewSchema>;

export const TraceEventSchema = z.object({
  seq: z.number(),
  type: EventType,
  call_id: z.string().nullable(),
  action_id: z.string().nullable(),
  payload: z.record(z.string(), z.unknown()),
});

/** An isolation report as the probes write it; the schema is the sandbox part's, the API passes it through. */
export const IsolationReportBody = z.record(z.string(), z.unknown());

export const IsolationVerdict = z.enum(["passed", "failed", "stale", "none", "unavailable"]);

export const HealthBody = z.strictObject({
  kind: z.literal("health"),
  ok: z.boolean(),
  daemon: z.strictObject({ pid: z.number(), version: z.string(), api: z.literal(API_VERSION) }),
  engine: z.strictObject({
    reachable: z.boolean(),
    version: z.string().nullable(),
    runtime: z.string(),
    image_digest: z.string().nullable(),
    image_present: z.boolean(),
    error: z.string().nullable(),
  }),
  isolation: z.strictObject({
    verdict: IsolationVerdict,
    generated_at: z.string().nullable(),
    reason: z.string().nullable(),
  }),
});
export type HealthBody = z.infer<typeof HealthBody>;

export const ErrorBody = z.strictObject({
  error: z.strictObject({
    code: z.enum(ERROR_CODES),
    message: z.string(),
    /** machine-readable extras (e.g. the gate's reason and refresh command); never credentials */
    details: z.record(z.string(), z.unknown()).optional(),
  }),
});
export type ErrorBody = z.infer<typeof ErrorBody>;

export const ApiResponse = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("run"), run: RunViewSchema }),
  z.strictObject({ kind: z.literal("runs"), runs: z.array(RunViewSchema) }),
  z.strictObject({ kind: z.literal("events"), events: z.array(TraceEventSchema), run: RunViewSchema }),
  z.strictObject({ kind: z.literal("diff"), run_id: z.string(), diff: z.string() }),
  z.strictObject({ kind: z.literal("isolation_report"), report: IsolationReportBody.nullable() }),
  HealthBody,
]);
export type ApiResponse = z.infer<typeof ApiResponse>;
export type ApiResponseOf<K extends ApiResponse["kind"]> = Extract<ApiResponse, { kind: K }>;

/** The trace endpoint answers JSONL, not JSON: one event per line. */
export const TRACE_CONTENT_TYPE = "application/x-ndjson";
