import { z } from "zod";
import { RunStatus } from "./run.js";

/**
 * An eval case: a folder, self-contained, that re-runs offline.
 *
 *   repo/         the workspace as it was at the run's baseline
 *   task.json     the TaskSpec (contracts/task-spec.ts)
 *   control/      the task's hidden control files, when it has them
 *   replay.json   the decisions (contracts/decision.ts ReplayFile): the "model" under evaluation
 *   expect.json   this schema: what the run must end as, do, not do, and stay within
 *
 * The case's identity is its folder name (unique within one eval run); its
 * version is a hash of repo/, task.json, control/ and expect.json. The replay
 * is deliberately NOT in the version: it is what an eval compares (a new
 * replay suite against an old one over the same cases).
 *
 * Strict: an unknown key is refused, so a misspelt rule never silently
 * passes. Every rule is optional; an absent rule is not checked.
 */
export const EXPECT_RULES = [
  "status",
  "reason",
  "must_call",
  "must_write_creatable",
  "red_before_green",
  "no_protected_change",
  "no_denied_command",
  "no_secret_in_diff",
  "max_tool_calls",
  "max_turns",
  "max_seconds",
  "max_tokens",
  "protocol_errors",
] as const;
export const ExpectRule = z.enum(EXPECT_RULES);
export type ExpectRule = z.infer<typeof ExpectRule>;

/**
 * Tool error codes that mean the model broke the protocol (not the task): the
 * eval judge counts them and capture expects as many as the captured run made.
 * A `model_error` stop is one too, counted from the run's reason.
 */
export const PROTOCOL_ERROR_CODES: ReadonlySet<string> = new Set(["invalid_fields", "unknown_tool"]);

const ToolName = z.string().min(1).max(64);
const Count = z.int().min(0);

export const CaseExpect = z.strictObject({
  schema_version: z.literal(1),
  /** one line for people: what the case shows */
  description: z.string().max(2048).optional(),
  /** the run's final status (a case without it is refused: every case has an expected verdict) */
  status: RunStatus,
  /** the run's final reason (RunView.reason); null: the run must end with no reason; absent: not checked */
  reason: z.string().max(256).nullable().optional(),
  require: z
    .strictObject({
      /** each named tool was called at least once */
      must_call: z.array(ToolName).max(16).optional(),
      /** at least one write created a file matching the task's `creatable` globs (a regression test was added) */
      must_write_creatable: z.boolean().optional(),
      /** a run_tests observation that failed came before one that passed */
      red_before_green: z.boolean().optional(),
      /**
       * the run made exactly this many model protocol errors (invalid_fields,
       * unknown_tool, model_error): a case that provokes them on purpose says
       * so, and those are then not counted in the suite's protocol-error rate
       * that the release gate judges (only unexpected ones are a regression)
       */
      protocol_errors: Count.optional(),
    })
    .optional(),
  forbid: z
    .strictObject({
      /** the Verifier found no protected path changed */
      no_protected_change: z.boolean().optional(),
      /** no run_command was denied by the policy */
      no_denied_command: z.boolean().optional(),
      /** the Verifier's diff scan found no secret */
      no_secret_in_diff: z.boolean().optional(),
    })
    .optional(),
  /**
   * call ids in replay.json whose `version` is stale on purpose (a case that shows
   * the host refusing a stale write). The loader refuses any OTHER call whose
   * version fits no state the file has had, because that means repo/ changed
   * under the replay; these it lets through.
   */
  stale_calls: z.array(z.string().min(1).max(128)).max(64).optional(),
  limits: z
    .strictObject({
      max_tool_calls: Count.optional(),
      max_turns: Count.optional(),
      max_seconds: z.number().positive().max(86_400).optional(),
      /** prompt + completion tokens (a replay reports 0) */
      max_tokens: Count.optional(),
    })
    .optional(),
});
export type CaseExpect = z.infer<typeof CaseExpect>;

/** The case folder's files, by role; one list for the loader, the hasher and capture. */
export const CASE_FILES = { repo: "repo", task: "task.json", control: "control", replay: "replay.json", expect: "expect.json" } as const;
