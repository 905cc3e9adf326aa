import { DEFAULT_TOOL_LIMITS } from "../tools/limits.js";

/**
 * What the Verifier's fresh-container test runs capture and read. The
 * baseline's tests (baseline-tests.ts) run under the same limits whether
 * run_tests or the Verifier asks, so both read the baseline the same way.
 */
export const VERIFIER_DEFAULTS = {
  /** runner output the verifier lets the executor capture; more is `truncated`, which fails */
  outputCapBytes: DEFAULT_TOOL_LIMITS.testReportMaxBytes,
  /** a junit_xml preset's report file larger than this is refused (too_large), as run_tests refuses it */
  testReportMaxBytes: DEFAULT_TOOL_LIMITS.testReportMaxBytes,
  /** failures kept from a report and their length: the parsers' own defaults, as run_tests reads them */
  testDiagnostics: DEFAULT_TOOL_LIMITS.testDiagnostics,
  diagnosticChars: DEFAULT_TOOL_LIMITS.diagnosticChars,
} as const;
