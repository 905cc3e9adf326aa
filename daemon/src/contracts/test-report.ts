import { z } from "zod";
import { FAMILY_NAME_PATTERN } from "./sandbox.js";

/**
 * The test report formats the host can read (tools/parsers/). A test preset's
 * `parser` names one of these (or `exit_code`, below).
 */
export const TestReportKind = z.enum(["node_test", "junit_xml", "go_test_json", "jest_json"]);
export type TestReportKind = z.infer<typeof TestReportKind>;

/**
 * What a test preset's `parser` may name: a report format, or `exit_code` for a
 * command with no machine-readable report (e.g. `make test`). Exit-code-only is
 * weaker and says so: no test count exists, so it is never "N tests passed".
 */
export const PresetParser = z.enum(["node_test", "junit_xml", "go_test_json", "jest_json", "exit_code"]);
export type PresetParser = z.infer<typeof PresetParser>;

/**
 * A sandbox image family's name, as a task or a run gives it: a built-in family or a custom one.
 * Only its shape is checked here; whether the daemon has it pinned is the executor's preflight
 * (image-pin.ts), which names the known ones.
 */
export const ImageFamily = z.string().regex(FAMILY_NAME_PATTERN, "a family name: lowercase letters, digits and '-'");
export type ImageFamily = z.infer<typeof ImageFamily>;

/**
 * One test as a report names it, for judging a run against its baseline test by
 * test (tools/test-compare.ts). `error` is a unit that could not load or build (a
 * pytest collection error, a Go package that did not compile, a test file that
 * failed to import): it names the unit, never a test, and is never counted as one.
 * A todo or xfail test is `skipped`: it did not pass.
 */
export const CaseOutcome = z.enum(["passed", "failed", "skipped", "error"]);
export type CaseOutcome = z.infer<typeof CaseOutcome>;

/** Test ids are the runner's own names (pytest node ids, `pkg/TestName`, `file > suite > test`), cut to this length. */
export const TEST_ID_MAX_CHARS = 512;
/** A report naming more tests than this keeps the counts but not the list (`cases_complete: false`): it cannot be compared test by test. */
export const MAX_CASES = 50_000;

export const TestCase = z.strictObject({ id: z.string().min(1).max(TEST_ID_MAX_CHARS), outcome: CaseOutcome });
export type TestCase = z.infer<typeof TestCase>;

/** A unit that failed before or outside its tests: what it was and the first lines of the runner's own words. */
export const LoadError = z.strictObject({ unit: z.string().max(TEST_ID_MAX_CHARS), message: z.string().max(2_000) });
export type LoadError = z.infer<typeof LoadError>;
