/**
 * Test report parsers: one home for every format a test preset can name.
 *
 *   parserFor(kind)(evidence, opts?): TestReportSummary
 *       node_test     node:test TAP on stdout (the runner's own summary block)
 *       junit_xml     the report FILE the command wrote in the sandbox (evidence.report)
 *       go_test_json  `go test -json` events on stdout (+ build errors on stderr)
 *       jest_json     the report FILE `jest --json --outputFile=...` wrote in the sandbox
 *
 * Every parser is total (a summary or a refusal, never a throw) and strict (a
 * report it cannot trust is 0 discovered, with `refusal` saying why). Whether a
 * summary is green is not decided here: that is the one verdict rule's job.
 * The rules per format are in README.md beside this file.
 */
import type { TestReportKind } from "../../contracts/test-report.js";
import { parseGoTestJson } from "./go-test-json.js";
import { parseJestJson } from "./jest-json.js";
import { parseJunitXml } from "./junit-xml.js";
import { parseNodeTest } from "./node-test.js";
import type { ReportFile } from "./report-file.js";
import type { ReportParseOptions, TestReportSummary } from "./summary.js";

/** What one test command left behind, as the host holds it. */
export interface RunnerEvidence {
  stdout: string;
  stderr: string;
  /** the report file read back from the sandbox (junit_xml, jest_json: its absence is `missing`) */
  report?: ReportFile;
}

export type TestReportParser = (evidence: RunnerEvidence, opts?: ReportParseOptions) => TestReportSummary;

const PARSERS: Record<TestReportKind, TestReportParser> = {
  node_test: (e, opts) => parseNodeTest(e.stdout, opts),
  junit_xml: (e, opts) => parseJunitXml(e.report ?? { status: "missing" }, opts),
  go_test_json: (e, opts) => parseGoTestJson(e.stdout, e.stderr, opts),
  jest_json: (e, opts) => parseJestJson(e.report ?? { status: "missing" }, opts),
};

export function parserFor(kind: TestReportKind): TestReportParser {
  return PARSERS[kind];
}

export { parseNodeTest, parseNodeTestOutput, type ParseOptions } from "./node-test.js";
export { parseJunitXml } from "./junit-xml.js";
export { parseGoTestJson } from "./go-test-json.js";
export { parseJestJson } from "./jest-json.js";
export { DEFAULT_JEST_REPORT_PATH, DEFAULT_JUNIT_REPORT_PATH, reportPathFor, type ReportFile, type ReportFileReader } from "./report-file.js";
export {
  REFUSAL_KINDS,
  REPORT_PARSE_DEFAULTS,
  type RefusalKind,
  type ReportParseOptions,
  type TestFailure,
  type TestOutputSummary,
  type TestReportSummary,
} from "./summary.js";
