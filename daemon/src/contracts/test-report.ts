import { z } from "zod";

/**
 * The test report formats the host can read (tools/parsers/). A test preset's
 * `parser` names one of these once run_tests and the Verifier read reports
 * through the parser registry; until then task specs accept only `node_test`.
 */
export const TestReportKind = z.enum(["node_test", "junit_xml", "go_test_json"]);
export type TestReportKind = z.infer<typeof TestReportKind>;
