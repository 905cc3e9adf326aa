import { z } from "zod";
import { IMAGE_FAMILIES } from "./sandbox.js";

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

/** The sandbox image families (sandbox-image/definitions.ts); a task or a run names one. */
export const ImageFamily = z.enum(IMAGE_FAMILIES);
export type ImageFamily = z.infer<typeof ImageFamily>;
