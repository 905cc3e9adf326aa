import * as z from "zod/mini";
import { ERROR_CODES } from "../errors.js";
import { RunView, TraceEvent } from "./run-view.js";

/**
 * The daemon's answers on /v1, one source of truth for both sides (requests
 * are in contracts/api.ts, which re-exports these). A discriminated union on
 * `kind`, so the client parses any answer with one schema and branches on it.
 * zod/mini (see contracts/run.ts): this is everything the client loads to
 * check an answer, on every status and approval.
 */
export const API_VERSION = "v1" as const;

/** An isolation report as the probes write it; the schema is the sandbox part's, the API passes it through. */
export const IsolationReportBody = z.record(z.string(), z.unknown());

export const IsolationVerdict = z.enum(["passed", "failed", "stale", "none", "unavailable"]);

const FamilyIsolation = z.strictObject({
  verdict: IsolationVerdict,
  generated_at: z.nullable(z.string()),
  reason: z.nullable(z.string()),
});

export const HealthBody = z.strictObject({
  kind: z.literal("health"),
  ok: z.boolean(),
  daemon: z.strictObject({ pid: z.number(), version: z.string(), api: z.literal(API_VERSION) }),
  engine: z.strictObject({
    reachable: z.boolean(),
    version: z.nullable(z.string()),
    runtime: z.string(),
    image_digest: z.nullable(z.string()),
    image_present: z.boolean(),
    error: z.nullable(z.string()),
  }),
  isolation: FamilyIsolation,
  /** the other image families' verdicts (a live run of a family needs its own passing report); absent: the engine is unreachable */
  families: z.optional(z.record(z.string(), FamilyIsolation)),
  /** the state dir and its size in bytes (`gc` frees what finished runs left); absent from older daemons */
  state_dir: z.optional(z.strictObject({ path: z.string(), bytes: z.nullable(z.number()) })),
});
export type HealthBody = z.infer<typeof HealthBody>;

export const ErrorBody = z.strictObject({
  error: z.strictObject({
    code: z.enum(ERROR_CODES),
    message: z.string(),
    /** machine-readable extras (e.g. the gate's reason and refresh command); never credentials */
    details: z.optional(z.record(z.string(), z.unknown())),
  }),
});
export type ErrorBody = z.infer<typeof ErrorBody>;

const PolicyVerdict = z.enum(["allow", "ask", "deny"]);

/**
 * `GET /v1/policy` (`mini-agent-client policy show`): the policy a run would
 * get now, daemon file + profile + the workspace's tightening. The same fields
 * as contracts/policy.ts EffectivePolicy (classic zod, which the client does
 * not load); a field the daemon adds later is dropped here, not refused.
 */
export const PolicyShowBody = z.strictObject({
  kind: z.literal("policy"),
  policy: z.object({
    profile: z.string(),
    tools: z.object({ read: PolicyVerdict, write: PolicyVerdict, command: PolicyVerdict, test: PolicyVerdict }),
    auto_edit: z.array(z.string()),
    /** writes inside the task's writable globs are approved by the policy (the `eval` profile) */
    auto_edit_writable: z.optional(z.boolean()),
    command_allow: z.array(z.array(z.string())),
    deny_tokens: z.array(z.string()),
    /** what a command not on the allowlist gets, when set (`commands.unlisted`) */
    command_unlisted: z.optional(z.enum(["ask", "deny"])),
    /** extra checks the Verifier runs (name and argv) */
    verify_commands: z.optional(z.array(z.object({ name: z.string(), command: z.array(z.string()) }))),
    /** the workspace's own rules (they only tighten), or null */
    workspace: z.nullable(z.record(z.string(), z.unknown())),
    /** the daemon's policy file, or null for the built-in policy */
    source: z.nullable(z.string()),
  }),
  source_digest: z.nullable(z.string()),
  /** the workspace rules file that was read, or null */
  workspace_file: z.nullable(z.string()),
});
export type PolicyShowBody = z.infer<typeof PolicyShowBody>;

/** Why capture left a baseline entry out of repo/: the export rule's refusals, plus a file the baseline could not read. */
export const CaptureLeftOutReason = z.enum(["repository_metadata", "forbidden", "symlink", "special", "hard_link", "unreadable"]);
export type CaptureLeftOutReason = z.infer<typeof CaptureLeftOutReason>;
/** How each reason reads, in the client's summary and in expect.json's description alike. */
export const CAPTURE_LEFT_OUT_TEXT: Record<CaptureLeftOutReason, string> = {
  repository_metadata: "repository metadata, never exported",
  forbidden: "forbidden to the task",
  symlink: "a symlink that leads outside the workspace or to something left out (or one the run's baseline did not keep)",
  special: "not a regular file",
  hard_link: "hard-linked (its other name may be outside the workspace)",
  unreadable: "unreadable at run start",
};

/** `POST /v1/runs/:id/capture`: the case folder written (contracts/eval-case.ts). */
export const CaseCapturedBody = z.strictObject({
  kind: z.literal("case_captured"),
  run_id: z.string(),
  /** absolute path of the case folder */
  out: z.string(),
  /** relative paths written, sorted (repo/ files as repo/<path>) */
  files: z.array(z.string()),
  /** baseline entries the export rule refused (workspace/sandbox-export.ts), left out of repo/, sorted */
  left_out: z.array(z.string()),
  /** the same, one line each: a folder the rule refused as a whole with its count, or a single path, and why */
  left_out_groups: z.array(z.strictObject({ path: z.string(), files: z.int(), reason: CaptureLeftOutReason })),
  /** expect.json as written: the defaults from the run (contracts/eval-case.ts CaseExpect) */
  expect: z.record(z.string(), z.unknown()),
});
export type CaseCapturedBody = z.infer<typeof CaseCapturedBody>;

/** One dependency layer as `env list` shows it (sandbox/dependency-layer.ts keeps the rest). */
export const DependencyLayerInfo = z.strictObject({
  key: z.string(),
  folder: z.string(),
  volume: z.string(),
  /** bytes of the files it holds */
  size_bytes: z.number(),
  files: z.number(),
  built_at: z.string(),
  last_used_at: z.string(),
  /** runs whose record names it; `resumable_runs` of them keep it from `env gc` */
  runs: z.array(z.string()),
  resumable_runs: z.array(z.string()),
  /** false when the engine no longer has its volume (then gc forgets it) */
  present: z.boolean(),
});
export type DependencyLayerInfo = z.infer<typeof DependencyLayerInfo>;

/** `GET /v1/env/layers` and `POST /v1/env/gc`: the layers, and for gc what was (or, dry, would be) removed. */
export const EnvLayersBody = z.strictObject({
  kind: z.literal("env_layers"),
  layers: z.array(DependencyLayerInfo),
  removed: z.optional(z.array(z.string())),
  dry_run: z.optional(z.boolean()),
});
export type EnvLayersBody = z.infer<typeof EnvLayersBody>;

/** One decision of the install sandbox's egress proxy: a name it let through, or one it refused before any connection. */
export const EgressDecision = z.strictObject({
  verdict: z.enum(["allowed", "refused"]),
  host: z.string(),
  port: z.number(),
  method: z.string(),
  reason: z.optional(z.string()),
});

/** `POST /v1/env/build`: the install command's outcome in its sandbox, what the proxy allowed and refused, and the layer made. */
export const EnvBuildBody = z.strictObject({
  kind: z.literal("env_build"),
  command: z.string(),
  /** the package manager (the command's first word, else the workspace's files): npm, pip or go */
  tool: z.optional(z.enum(["npm", "pip", "go"])),
  /** the registry it was pointed at (npm registry, pip index, GOPROXY), and which file or variable named it ("default": none did) */
  registry: z.string(),
  registry_from: z.string(),
  /** what of the user's configuration was left out, in words (Go's `direct`) */
  notes: z.optional(z.array(z.string())),
  /** true when that file held an auth entry: it never entered the sandbox, and the registry was reached without it */
  auth_dropped: z.boolean(),
  allowed_hosts: z.array(z.string()),
  exit_code: z.nullable(z.number()),
  timed_out: z.boolean(),
  /** the kernel killed the install for the install sandbox's memory limit, `memory_limit_bytes` (its folder and download cache count too) */
  oom_killed: z.boolean(),
  memory_limit_bytes: z.number(),
  /** the command's output (capped as any sandbox command's) */
  output: z.string(),
  egress: z.array(EgressDecision),
  /** the layer it made (exit 0 only) */
  layer: z.nullable(z.strictObject({ key: z.string(), folder: z.string(), volume: z.string(), size_bytes: z.number(), files: z.number() })),
});
export type EnvBuildBody = z.infer<typeof EnvBuildBody>;

/** The documented default retention of `gc`: the newest 20 finished runs, and any finished in the last 14 days, keep their files. */
export const GC_DEFAULTS = { olderThanMs: 14 * 86_400_000, olderThan: "14d", keep: 20 } as const;

/** `POST /v1/gc`: what was (or, dry, would be) removed and what was kept */
export const GcBody = z.strictObject({
  kind: z.literal("gc"),
  dry_run: z.boolean(),
  older_than_ms: z.number(),
  keep: z.number(),
  runs: z.array(z.strictObject({ run_id: z.string(), status: z.string(), bytes: z.number() })),
  baseline_results: z.number(),
  bytes_freed: z.number(),
  kept_finished: z.number(),
  kept_open: z.number(),
});
export type GcBody = z.infer<typeof GcBody>;
/**
 * `POST /v1/checks/tests`: the workspace's tests in a fresh sandbox, read by
 * run_tests' own parser and verdict. `result` is run_tests' data (counts,
 * failures, limits), passed through as the tool writes it.
 */
export const SandboxTestsBody = z.strictObject({
  kind: z.literal("sandbox_tests"),
  workspace: z.string(),
  image_family: z.string(),
  test_source: z.string(),
  command: z.array(z.string()),
  /** run_tests' verdict: every discovered test ran and passed */
  green: z.boolean(),
  /** why not green (tests_failed, not_found, cancelled, a sandbox error code); null when green */
  code: z.nullable(z.string()),
  message: z.nullable(z.string()),
  result: z.record(z.string(), z.unknown()),
  warnings: z.array(z.string()),
});
export type SandboxTestsBody = z.infer<typeof SandboxTestsBody>;

/**
 * `POST /v1/checks/exec`: one command the policy allowed, run in a fresh warm
 * sandbox that is removed afterwards. `result` is run_command's data (exit
 * code, output tails, the files it changed there, which were discarded).
 */
export const SandboxExecBody = z.strictObject({
  kind: z.literal("sandbox_exec"),
  workspace: z.string(),
  image_family: z.string(),
  /** the policy rule that allowed it */
  rule: z.string(),
  ok: z.boolean(),
  code: z.nullable(z.string()),
  message: z.nullable(z.string()),
  result: z.record(z.string(), z.unknown()),
});
export type SandboxExecBody = z.infer<typeof SandboxExecBody>;

/** A sandbox_exec's question to a person and its answer (`approve chk_…`): what would run, where, and the state */
export const CheckApprovalBody = z.strictObject({
  kind: z.literal("check_approval"),
  id: z.string(),
  workspace: z.string(),
  argv: z.array(z.string()),
  state: z.enum(["pending", "approved", "rejected"]),
  reason: z.nullable(z.string()),
});
export type CheckApprovalBody = z.infer<typeof CheckApprovalBody>;

/** `POST /v1/checks/baseline`: the workspace's state recorded in the state dir, what `verify` compares against */
export const VerifyBegunBody = z.strictObject({
  kind: z.literal("verify_begun"),
  workspace: z.string(),
  baseline_digest: z.string(),
  files: z.number(),
  recorded_at: z.string(),
});
export type VerifyBegunBody = z.infer<typeof VerifyBegunBody>;

/** `POST /v1/checks/verify`: the host Verifier's evidence (contracts/run-view.ts VerificationEvidence), passed through */
export const VerificationBody = z.strictObject({
  kind: z.literal("verification"),
  workspace: z.string(),
  passed: z.boolean(),
  reason: z.nullable(z.string()),
  baseline_recorded_at: z.string(),
  evidence: z.record(z.string(), z.unknown()),
});
export type VerificationBody = z.infer<typeof VerificationBody>;

export const ApiResponse = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("run"), run: RunView }),
  z.strictObject({ kind: z.literal("runs"), runs: z.array(RunView) }),
  z.strictObject({ kind: z.literal("events"), events: z.array(TraceEvent), run: RunView }),
  z.strictObject({ kind: z.literal("diff"), run_id: z.string(), diff: z.string() }),
  z.strictObject({ kind: z.literal("isolation_report"), report: z.nullable(IsolationReportBody) }),
  HealthBody,
  PolicyShowBody,
  z.strictObject({
    kind: z.literal("task_draft"),
    /** the drafted TaskSpec (contracts/task-spec.ts), validated by the daemon */
    task: z.record(z.string(), z.unknown()),
    workspace: z.string(),
    test_source: z.string(),
    dirty_files: z.array(z.string()),
    warnings: z.array(z.string()),
    /** names this draft in the run that follows (POST /v1/runs adhoc.draft_id): the daemon runs it as drafted, or refuses */
    draft_id: z.string(),
  }),
  CaseCapturedBody,
  EnvLayersBody,
  EnvBuildBody,
  GcBody,
  SandboxTestsBody,
  SandboxExecBody,
  VerifyBegunBody,
  VerificationBody,
  CheckApprovalBody,
]);
export type ApiResponse = z.infer<typeof ApiResponse>;
export type ApiResponseOf<K extends ApiResponse["kind"]> = Extract<ApiResponse, { kind: K }>;
