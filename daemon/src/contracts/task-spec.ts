import { z } from "zod";
import { Id, SchemaVersion } from "./common.js";
import { ImageFamily, PresetParser, TEST_ID_MAX_CHARS } from "./test-report.js";

/**
 * task.json: the same format for the shipped fixtures and for users' own tasks.
 * Globs are picomatch globs relative to the workspace root.
 */
export const TestPreset = z.strictObject({
  /** argv run inside the sandbox with /workspace as cwd. */
  command: z.array(z.string().min(1).max(512)).min(1).max(64),
  /**
   * Test files expanded HOST-side and appended to argv. Node 20's `node --test DIR`
   * skips `tests/test_x.js`, exiting 0 with 0 tests; naming files avoids that false green.
   */
  files: z.array(z.string().min(1).max(256)).max(32).default([]),
  /**
   * How the result is read: node_test (TAP on stdout), junit_xml (the report file
   * the command writes at /tmp/mini-agent-junit.xml in the sandbox), go_test_json
   * (`go test -json` on stdout), exit_code (no count: weaker, and said so).
   */
  parser: PresetParser.default("node_test"),
  timeout_seconds: z.int().min(1).max(3600).default(60),
});
export type TestPreset = z.infer<typeof TestPreset>;

export const Acceptance = z
  .strictObject({
    /** argv run in a fresh sandbox; control assets are visible read-only under /control. */
    command: z.array(z.string().min(1).max(512)).min(1).max(64),
    /** the exact case ids the acceptance output must report. */
    cases: z.array(Id).min(1).max(256),
    /**
     * case id -> the `actual` the case must report, compared by the host (canonical JSON).
     * It never enters a sandbox: code under test shares the acceptance sandbox with the
     * harness and can read /control or print the harness's lines, so a verdict made in
     * there is only a claim; answers to hidden inputs it cannot know are the proof.
     */
    expected: z.record(Id, z.json()),
    timeout_seconds: z.int().min(1).max(3600).default(60),
  })
  .superRefine((a, ctx) => {
    const cases = new Set(a.cases);
    if (cases.size !== a.cases.length) ctx.addIssue({ code: "custom", path: ["cases"], message: "case ids must be unique" });
    const missing = a.cases.filter((id) => !(id in a.expected));
    const extra = Object.keys(a.expected).filter((id) => !cases.has(id));
    if (missing.length > 0) ctx.addIssue({ code: "custom", path: ["expected"], message: `no expected answer for case(s): ${missing.join(", ")}` });
    if (extra.length > 0) ctx.addIssue({ code: "custom", path: ["expected"], message: `expected answers for unknown case(s): ${extra.join(", ")}` });
  });
export type Acceptance = z.infer<typeof Acceptance>;

/**
 * An extra check the Verifier runs after the candidate tests (a linter, a type
 * checker), in a FRESH sandbox exactly like the verify preset; a red one fails
 * the run as verify_command_failed (issue 12). From the task (`verify_commands`)
 * and from the policy (contracts/policy.ts). No shell: argv only, as every preset.
 */
export const VerifyCommand = z.strictObject({
  name: Id,
  command: z.array(z.string().min(1).max(512)).min(1).max(64),
  /** how the result is read, as a preset's (exit_code: the exit status alone) */
  parser: PresetParser.default("exit_code"),
  timeout_seconds: z.int().min(1).max(3600).default(120),
});
export type VerifyCommand = z.infer<typeof VerifyCommand>;

/** At most this many per source (task, daemon policy, workspace policy): each one is a fresh sandbox. */
export const VERIFY_COMMANDS_MAX = 8;

export const VerifyCommands = z
  .array(VerifyCommand)
  .max(VERIFY_COMMANDS_MAX)
  .refine((cs) => new Set(cs.map((c) => c.name)).size === cs.length, "verify command names must be unique");

/**
 * A task's acceptance as SWE-bench states it: test ids as the verify preset's
 * parser names them (pytest node ids `tests/test_x.py::TestC::test_y[p]`,
 * `pkg/TestName`). The published datasets list up to a few thousand per
 * instance; the cap keeps a task.json bounded.
 */
export const REQUIRED_TESTS_MAX = 20_000;
const TestIdList = z.array(z.string().min(1).max(TEST_ID_MAX_CHARS)).max(REQUIRED_TESTS_MAX);

/**
 * A folder of the control dir laid over the workspace in the Verifier's fresh
 * sandboxes only: relative, inside the control dir, no `..`, no absolute path,
 * no backslash (a Windows-made path is never reinterpreted).
 */
const HiddenTestsDir = z
  .string()
  .min(1)
  .max(256)
  .refine((p) => !p.startsWith("/") && !p.includes("\\") && !p.includes("\0") && p.split("/").every((part) => part !== "" && part !== "." && part !== ".."), {
    message: "a relative folder inside the control dir (no leading /, no '.', '..' or empty parts, no backslash)",
  });

export const Budgets = z.strictObject({
  model_turns: z.int().min(1).max(1000).default(30),
  tool_calls: z.int().min(1).max(1000).default(40),
  total_seconds: z.int().min(1).max(86_400).default(900),
  per_call_seconds: z.int().min(1).max(3600).default(120),
  /** optional cap on prompt+completion tokens for live models */
  tokens: z.int().min(1).optional(),
});
export type Budgets = z.infer<typeof Budgets>;

export const TaskSpec = z
  .strictObject({
    schema_version: SchemaVersion,
    name: Id,
    task: z.string().min(1).max(16_384),
    /** paths the agent may modify (globs); every other path is protected. */
    writable: z.array(z.string().min(1).max(256)).min(1).max(64),
    /** globs where NEW files may be created (version=absent, old=""). */
    creatable: z.array(z.string().min(1).max(256)).max(64).default([]),
    /** extra forbidden-to-read globs on top of the built-in list. */
    forbidden: z.array(z.string().min(1).max(256)).max(64).default([]),
    test_presets: z.record(Id, TestPreset).refine((p) => Object.keys(p).length > 0, "at least one test preset"),
    /** the preset the Verifier runs as the candidate tests. */
    verify_preset: Id,
    acceptance: Acceptance.optional(),
    /** the sandbox image family the task's code runs in; absent: the daemon's configured family (node) */
    image_family: ImageFamily.optional(),
    /** extra checks the Verifier runs after the candidate tests; absent: none (kept absent so existing records stay as they were) */
    verify_commands: VerifyCommands.optional(),
    /**
     * test ids (as the verify preset's runner names them) that must pass after the run,
     * though they fail or are skipped at the baseline; absent: tests failing or skipped
     * before the run are listed in the verdict and not held against it
     */
    must_pass: TestIdList.optional(),
    /**
     * the run must leave a regression test: at least one test in a file the run changed
     * or created that failed (or did not exist) at the baseline and passes now
     */
    regression_test: z.boolean().optional(),
    /** SWE-bench's lists: tests the change must make pass, and tests it must keep passing (verifier/required-tests.ts) */
    FAIL_TO_PASS: TestIdList.optional(),
    PASS_TO_PASS: TestIdList.optional(),
    /** control-dir folder whose files replace the workspace's in the Verifier's fresh sandboxes; never in run_tests', never in the workspace */
    hidden_tests: HiddenTestsDir.optional(),
    budgets: Budgets.default(Budgets.parse({})),
  })
  .refine((t) => t.regression_test !== true || t.test_presets[t.verify_preset]?.parser !== "exit_code", {
    message: "regression_test needs a verify preset whose report names its tests, not exit_code",
    path: ["regression_test"],
  })
  .refine((t) => !t.must_pass?.length || t.test_presets[t.verify_preset]?.parser !== "exit_code", {
    message: "must_pass names tests, and an exit_code verify preset names none",
    path: ["must_pass"],
  })
  .refine((t) => t.verify_preset in t.test_presets, {
    message: "verify_preset must name one of test_presets",
    path: ["verify_preset"],
  })
  .refine((t) => (t.FAIL_TO_PASS ?? []).length + (t.PASS_TO_PASS ?? []).length === 0 || t.test_presets[t.verify_preset]?.parser !== "exit_code", {
    // an exit status names no test: a list of ids could never be checked, so it would always fail
    message: "FAIL_TO_PASS / PASS_TO_PASS need a verify preset whose parser names tests (node_test, junit_xml, go_test_json), not exit_code",
    path: ["verify_preset"],
  });
export type TaskSpec = z.infer<typeof TaskSpec>;

/** The family a task's code runs in, everywhere (warm session, Verifier, acceptance, gate): absent means node. */
export function taskImageFamily(task: Pick<TaskSpec, "image_family">): ImageFamily {
  return task.image_family ?? "node";
}
