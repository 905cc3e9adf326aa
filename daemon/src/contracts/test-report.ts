import { z } from "zod";
import { FAMILY_NAME_PATTERN } from "./sandbox.js";

/**
 * The test report formats the host can read (tools/parsers/). A test preset's
 * `parser` names one of these (or `exit_code`, below).
 */
export const TestReportKind = z.enum(["node_test", "junit_xml", "go_test_json"]);
export type TestReportKind = z.infer<typeof TestReportKind>;

/**
 * What a test preset's `parser` may name: a report format, or `exit_code` for a
 * command with no machine-readable report (e.g. `make test`). Exit-code-only is
 * weaker and says so: no test count exists, so it is never "N tests passed".
 */
export const PresetParser = z.enum(["node_test", "junit_xml", "go_test_json", "exit_code"]);
export type PresetParser = z.infer<typeof PresetParser>;

/**
 * A sandbox image family's name, as a task or a run gives it: a built-in family or a custom one.
 * Only its shape is checked here; whether the daemon has it pinned is the executor's preflight
 * (image-pin.ts), which names the known ones.
 */
export const ImageFamily = z.string().regex(FAMILY_NAME_PATTERN, "a family name: lowercase letters, digits and '-'");
export type ImageFamily = z.infer<typeof ImageFamily>;
