/**
 * The one result shape of every test report parser (node_test, junit_xml, jest_json,
 * go_test_json). A parser is total: it returns a summary or a refusal for any
 * input and never throws. A refusal carries 0 in every count, so no reader can
 * mistake a report it could not trust for a run with results.
 */
import type { LoadError, TestCase, TestReportKind } from "../../contracts/test-report.js";
import { DEFAULT_TOOL_LIMITS } from "../limits.js";
import type { TestSummary } from "../test-verdict.js";
import type { CaseListed } from "./cases.js";

export interface TestFailure {
  name: string;
  message: string;
}

/** What run_tests and the Verifier read today (the node:test parser's shape). */
/** The parser-neutral counts (judged by test-verdict.ts, the one green/red rule) plus the first failures. */
export interface TestOutputSummary extends TestSummary {
  /** first failing tests in output order, capped */
  failures: TestFailure[];
  /**
   * test files that exited 0 without running a test: node's runner counts each as
   * one passing test named by its path; here they are taken out of
   * `discovered` and `passed`.
   */
  files_without_tests: string[];
}

/**
 * Why a report was not accepted:
 * - missing: there is no report (no file, or no summary in the output)
 * - empty: the report has no content
 * - too_large: over the size cap; never read, never parsed
 * - unreadable: it exists but could not be read (not a regular file, I/O error)
 * - truncated: it ends before it is complete
 * - unparsable: not the format (malformed, unexpected shape, markup declarations)
 * - inconsistent: its own numbers disagree (summary totals vs the tests it lists)
 */
export const REFUSAL_KINDS = ["missing", "empty", "too_large", "unreadable", "truncated", "unparsable", "inconsistent"] as const;
export type RefusalKind = (typeof REFUSAL_KINDS)[number];

/**
 * `TestOutputSummary` plus what the other formats need. Invariants (tested for
 * every parser): accepted => discovered = passed + failed + cancelled + skipped + todo;
 * refused => every count 0, `summary_found` false, `problem` says why.
 */
export interface TestReportSummary extends TestOutputSummary {
  source: TestReportKind;
  /** JUnit `<error>` test cases (a crash, not an assertion); already counted in `failed` */
  errors: number;
  /** Go packages that failed to build or set up: load errors, never tests */
  build_failed: string[];
  /** why the report was refused; null when it was accepted */
  refusal: RefusalKind | null;
  /**
   * every test the report names, in report order, ids unique (a repeated id keeps
   * its worst outcome), plus one `error` case per unit that failed to load; [] when refused
   */
  cases: TestCase[];
  /** false when the report named more than MAX_CASES (the list is cut; counts are whole) or was refused */
  cases_complete: boolean;
  /** units that failed to load or build (collection errors): in `cases` as `error`, never in discovered/failed */
  load_error_count: number;
  /** the first 20 of them, with the runner's own first lines */
  load_errors: LoadError[];
}

export interface ReportParseOptions {
  /** failing tests listed in `failures`, in report order */
  maxFailures?: number;
  /** each failure's name and message are cut to this many characters */
  maxMessageChars?: number;
  /** a report file larger than this is refused as too_large before parsing */
  maxReportBytes?: number;
}

export const REPORT_PARSE_DEFAULTS = {
  maxFailures: DEFAULT_TOOL_LIMITS.testDiagnostics,
  maxMessageChars: DEFAULT_TOOL_LIMITS.diagnosticChars,
  /**
   * 16 MiB; parsing is synchronous. 7,000 tests: 40-270 ms per format, 20,000: 0.3-1.1 s,
   * on a shared, loaded 2-core machine (scripts/bench-parsers.ts). JUnit's own element
   * bounds (junit-xml.ts) stop a file of 16 MiB of tiny elements before it is parsed.
   */
  maxReportBytes: DEFAULT_TOOL_LIMITS.testReportMaxBytes,
} as const;

export function resolveParseOptions(opts: ReportParseOptions = {}): Required<ReportParseOptions> {
  return {
    maxFailures: opts.maxFailures ?? REPORT_PARSE_DEFAULTS.maxFailures,
    maxMessageChars: opts.maxMessageChars ?? REPORT_PARSE_DEFAULTS.maxMessageChars,
    maxReportBytes: opts.maxReportBytes ?? REPORT_PARSE_DEFAULTS.maxReportBytes,
  };
}

export interface AcceptedCounts {
  passed: number;
  failed: number;
  skipped: number;
  cancelled?: number;
  todo?: number;
  errors?: number;
}

export interface AcceptedExtras {
  failures: TestFailure[];
  files_without_tests?: string[];
  build_failed?: string[];
  /** the cases and load errors the parser collected (cases.ts) */
  listed: CaseListed;
}

export function accepted(source: TestReportKind, counts: AcceptedCounts, extras: AcceptedExtras): TestReportSummary {
  const cancelled = counts.cancelled ?? 0;
  const todo = counts.todo ?? 0;
  return {
    source,
    summary_found: true,
    discovered: counts.passed + counts.failed + cancelled + counts.skipped + todo,
    passed: counts.passed,
    failed: counts.failed,
    cancelled,
    skipped: counts.skipped,
    todo,
    errors: counts.errors ?? 0,
    failures: extras.failures,
    files_without_tests: extras.files_without_tests ?? [],
    build_failed: extras.build_failed ?? [],
    refusal: null,
    problem: null,
    ...extras.listed,
  };
}

/** A report that cannot be trusted: 0 discovered, never a guess. Failures already read stay as diagnostics. */
export function refused(source: TestReportKind, refusal: RefusalKind, problem: string, failures: TestFailure[] = []): TestReportSummary {
  return {
    source,
    summary_found: false,
    discovered: 0,
    passed: 0,
    failed: 0,
    cancelled: 0,
    skipped: 0,
    todo: 0,
    errors: 0,
    failures,
    files_without_tests: [],
    build_failed: [],
    refusal,
    problem,
    // nothing a refused report names can be compared: no list, and not a complete one
    cases: [],
    cases_complete: false,
    load_error_count: 0,
    load_errors: [],
  };
}

/** Cuts a diagnostic to `max` characters without splitting a surrogate pair. */
export function cap(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  const last = cut.charCodeAt(cut.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? cut.slice(0, -1) : cut;
}
