import { z } from "zod";
import { GC_DEFAULTS } from "./api-responses.js";
import { Id } from "./common.js";
import { ProfileName } from "./policy.js";
import { OrchestratorName } from "./run.js";
import { Backend, Runtime, SandboxInclude } from "./sandbox.js";
import { Budgets, TaskSpec } from "./task-spec.js";
import { ImageFamily } from "./test-report.js";
import { RunCommandArgs } from "./tool-call.js";

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

const Glob = z.string().min(1).max(256);

/**
 * An ad-hoc task (`run --workspace DIR --goal TEXT`): the daemon drafts the
 * TaskSpec from the folder itself (adhoc/), so the client owns nothing. Paths
 * and globs are checked there, with typed codes (invalid_workspace, invalid_glob...).
 */
export const AdhocTaskRequest = z.strictObject({
  goal: z.string().min(1).max(16_384),
  /** `--test "CMD ARG..."`: split like a shell splits words, never run through one */
  test: z.string().max(4096).optional(),
  writable: z.array(Glob).max(32).default([]),
  protect: z.array(Glob).max(32).default([]),
});
export type AdhocTaskRequest = z.infer<typeof AdhocTaskRequest>;

/** A family name as given (`--image-family`); the daemon answers `unknown_image_family` for one it does not have. */
const FamilyName = z.string().min(1).max(64);

/** POST /v1/tasks/draft: the spec an ad-hoc run would use, without creating the run (`--print-task`). */
export const DraftTaskRequest = z.strictObject({
  workspace: AbsPath,
  ...AdhocTaskRequest.shape,
  image_family: FamilyName.optional(),
});
export type DraftTaskRequest = z.infer<typeof DraftTaskRequest>;

/** The id `POST /tasks/draft` answers with; `POST /runs` names it to run exactly the task that was drafted and shown. */
export const DraftId = z.string().regex(/^drf_[0-9a-f]{20}$/, "a draft id as POST /v1/tasks/draft answered it");

/** An ad-hoc run: what was typed, and the draft it was shown as (absent: the daemon drafts it now). */
const AdhocRunRequest = z.strictObject({ ...AdhocTaskRequest.shape, draft_id: DraftId.optional() });

export const CreateRunRequest = z
  .strictObject({
    workspace: AbsPath,
    fixture_dir: AbsPath.optional(),
    task_spec: TaskSpec.optional(),
    adhoc: AdhocRunRequest.optional(),
    /** sets the task's image_family (fixture, task spec or ad-hoc) */
    image_family: FamilyName.optional(),
    control_dir: AbsPath.optional(),
    model: z.enum(["replay", "live"]).default("replay"),
    replay_path: AbsPath.optional(),
    trust_replay_file: z.boolean().default(false),
    backend: z._default(Backend, "container"),
    /** `--runtime`: the OCI runtime of the run's sandboxes (default: the daemon's); refused with trusted_local */
    runtime: z.optional(Runtime),
    budgets: Budgets.partial().optional(),
    /** forbidden paths the run's sandboxes may still see (`--sandbox-include`); read_file keeps refusing them */
    sandbox_include: z._default(SandboxInclude, []),
    /** `--policy-profile`: which of the policy's profiles the run gets (default: the policy file's default_profile) */
    policy_profile: ProfileName.optional(),
    /** `--orchestrator`: who takes the run's turns and saves its pauses (default manual) */
    orchestrator: z.optional(OrchestratorName),
    /** `--max-workspace-bytes`: this run's limit on the workspace (or fixture repo/) it copies (default: the daemon's) */
    max_workspace_bytes: z.int().min(1).max(Number.MAX_SAFE_INTEGER).optional(),
    /** `--max-workspace-files`: this run's limit on the regular files in it */
    max_workspace_files: z.int().min(1).max(Number.MAX_SAFE_INTEGER).optional(),
  })
  .refine((r) => [r.fixture_dir, r.task_spec, r.adhoc].filter((x) => x !== undefined).length === 1, {
    message: "give exactly one of fixture_dir, task_spec or adhoc",
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

/** `eval capture RUN --out DIR`: the case folder to write (must not exist, or be empty). */
export const CaptureRequest = z.strictObject({ out: AbsPath });
export type CaptureRequest = z.infer<typeof CaptureRequest>;

export const RunIdParam = Id;
export const ActionIdParam = Id;

export const EventsQuery = z.strictObject({
  since: z.coerce.number().int().min(0).default(0),
  wait_ms: z.coerce.number().int().min(0).max(60_000).default(0),
});

/** `GET /v1/policy?profile=P&workspace=DIR`: the effective policy (`policy show`) */
export const PolicyQuery = z.strictObject({ profile: ProfileName.optional(), workspace: AbsPath.optional() });

/** `family`: the image family to probe (node when absent); its report is stored under its own key */
export const ProbeRequest = z.strictObject({ runtime: z.optional(Runtime), family: z.optional(ImageFamily) });

/** `POST /v1/env/gc`: remove dependency layers last used more than `older_than_ms` ago that no resumable run names */
export const EnvGcRequest = z.strictObject({
  older_than_ms: z.int().min(0).max(Number.MAX_SAFE_INTEGER).default(0),
  dry_run: z.boolean().default(false),
});

/**
 * `POST /v1/env/build`: run `install` (npm, pip or go: its first word picks the tool and, without `image_family`,
 * the family) in an install sandbox whose only way out is the egress proxy; `allow_hosts` (HOST[:PORT]) are added
 * to the registry the user's npm, pip or Go configuration names.
 */
export const EnvBuildRequest = z.strictObject({
  workspace: AbsPath,
  install: z.string().min(1).max(4096),
  allow_hosts: z.array(z.string().min(1).max(300)).max(32).default([]),
  image_family: FamilyName.optional(),
  timeout_seconds: z.int().min(1).max(3600).default(600),
});

/** `POST /v1/gc`: remove the files of finished runs older than `older_than_ms`, past the newest `keep` */
export const GcRequest = z.strictObject({
  older_than_ms: z.int().min(0).max(Number.MAX_SAFE_INTEGER).default(GC_DEFAULTS.olderThanMs),
  keep: z.int().min(0).max(1_000_000).default(GC_DEFAULTS.keep),
  dry_run: z.boolean().default(false),
});
export type GcRequest = z.infer<typeof GcRequest>;
/**
 * Workspace checks without a model (the MCP server's tools, issue 28): the
 * workspace's tests in a fresh proven sandbox, a baseline recorded now, and the
 * host Verifier's verdict against it later. The folder is checked and drafted
 * exactly as for an ad-hoc run (adhoc/), so the same folders are refused.
 */
export const SandboxTestsRequest = z.strictObject({
  workspace: AbsPath,
  /** the test command as words (`--test`); absent: detected from the folder */
  test: AdhocTaskRequest.shape.test,
  image_family: FamilyName.optional(),
});
export type SandboxTestsRequest = z.infer<typeof SandboxTestsRequest>;

/**
 * One argv in a fresh sandbox of the workspace's family, under the command
 * policy a run of that workspace would get. run_command's own argument rules
 * (argv words, at most 64, a capped timeout), so nothing here can accept more.
 */
/** the id of a sandbox_exec's question to a person (checks/approvals.ts) */
export const CheckApprovalId = z.string().regex(/^chk_[0-9a-f]{20}$/, "an approval id (chk_ and 20 hex digits)");

export const SandboxExecRequest = RunCommandArgs.extend({
  workspace: AbsPath,
  image_family: FamilyName.optional(),
  /** the id a command the policy asks about was given: run it once a person approved exactly this call */
  approval_id: CheckApprovalId.optional(),
});
export type SandboxExecRequest = z.infer<typeof SandboxExecRequest>;

/** `POST /v1/checks/approvals/:id`: a person's answer to a sandbox_exec the policy asks about */
export const CheckApprovalRequest = z.strictObject({ decision: z.enum(["approve", "reject"]), reason: z.string().min(1).max(2_000).optional() });
export type CheckApprovalRequest = z.infer<typeof CheckApprovalRequest>;

/** `test` and `image_family` only pick the family whose sandbox must be proven (the tests run at `verify`) */
export const VerifyBeginRequest = z.strictObject({ workspace: AbsPath, test: AdhocTaskRequest.shape.test, image_family: FamilyName.optional() });
export type VerifyBeginRequest = z.infer<typeof VerifyBeginRequest>;

export const VerifyRequest = z.strictObject({
  workspace: AbsPath,
  /** what the work was meant to do; only recorded in the drafted task */
  goal: AdhocTaskRequest.shape.goal.optional(),
  /** globs that must be unchanged since verify_begin */
  protect: AdhocTaskRequest.shape.protect,
  test: AdhocTaskRequest.shape.test,
  image_family: FamilyName.optional(),
});
export type VerifyRequest = z.infer<typeof VerifyRequest>;

// ---- response bodies: contracts/api-responses.ts (zod/mini, what the client loads) and contracts/run-view.ts

export {
  API_VERSION,
  ApiResponse,
  CaseCapturedBody,
  DependencyLayerInfo,
  EnvLayersBody,
  EnvBuildBody,
  ErrorBody,
  GC_DEFAULTS,
  GcBody,
  HealthBody,
  IsolationReportBody,
  IsolationVerdict,
  PolicyShowBody,
  SandboxExecBody,
  CheckApprovalBody,
  SandboxTestsBody,
  VerificationBody,
  VerifyBegunBody,
} from "./api-responses.js";
export type { ApiResponseOf } from "./api-responses.js";

/** The trace endpoint answers JSONL, not JSON: one event per line. */
export const TRACE_CONTENT_TYPE = "application/x-ndjson";
