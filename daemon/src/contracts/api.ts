import { z } from "zod";
import { Id } from "./common.js";
import { Backend, Runtime, SandboxInclude } from "./sandbox.js";
import { Budgets, TaskSpec } from "./task-spec.js";
import { ImageFamily } from "./test-report.js";

/**
 * The daemon/client protocol (/v1), one source of truth for both sides.
 * Requests are strict: an unknown field is a 400, never silently dropped.
 * Responses are a discriminated union on `kind` so the client can parse any
 * answer with one schema and branch on it.
 */

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
    backend: z._default(Backend, "container"),
    budgets: Budgets.partial().optional(),
    /** forbidden paths the run's sandboxes may still see (`--sandbox-include`); read_file keeps refusing them */
    sandbox_include: z._default(SandboxInclude, []),
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

/** `family`: the image family to probe (node when absent); its report is stored under its own key */
export const ProbeRequest = z.strictObject({ runtime: z.optional(Runtime), family: z.optional(ImageFamily) });

// ---- response bodies: contracts/api-responses.ts (zod/mini, what the client loads) and contracts/run-view.ts

export { API_VERSION, ApiResponse, ErrorBody, HealthBody, IsolationReportBody, IsolationVerdict } from "./api-responses.js";
export type { ApiResponseOf } from "./api-responses.js";

/** The trace endpoint answers JSONL, not JSON: one event per line. */
export const TRACE_CONTENT_TYPE = "application/x-ndjson";
