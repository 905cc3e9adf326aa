/**
 * THE rule for "did this test run pass", used by run_tests (what the model is
 * told) and by the Verifier (what decides "done"). They used to disagree on a
 * skipped test: run_tests said green for 2 passed + 1 skipped, the Verifier
 * failed it (issue 10, item 13). Every test-output parser (node:test today;
 * JUnit XML and go test -json later) produces a TestSummary and calls this; no
 * caller judges counts itself.
 *
 * What a skipped or todo test means: it did NOT pass. A run is green only when
 * every discovered test ran and passed. A skip is the cheapest way to turn a
 * red run green (`it.skip`, `{ skip: true }`, `t.skip()` in a test the model
 * wrote or touched), so it can never count as a pass; a todo test's result is
 * ignored by the runner by definition, so it is no evidence either. There is no
 * exception: a task whose own tests must stay skipped keeps those files out of
 * its verify preset (presets name their files explicitly).
 */
import { EXIT_CODE_ONLY_PASSED } from "../contracts/run-view.js";
import type { LoadError, TestCase } from "../contracts/test-report.js";

/** Counts as a parser reports them; `discovered` = passed + failed + cancelled + skipped + todo. */
export interface TestSummary {
  /** false: the runner's summary was missing or inconsistent; the counts are then all 0 */
  summary_found: boolean;
  discovered: number;
  passed: number;
  failed: number;
  cancelled: number;
  skipped: number;
  todo: number;
  /** test files that exited without running a test; not counted in discovered or passed */
  files_without_tests: readonly string[];
  /** why the summary was not accepted, when it was not */
  problem: string | null;
  /**
   * an `exit_code` preset: the command has no machine-readable report, so no
   * count exists (all 0, never shown as "0/0") and only its exit status is judged
   */
  exit_code_only?: boolean;
  /** every test the report names, ids unique (absent: the format or an old summary names none) */
  cases?: readonly TestCase[];
  /** false: the report named more than MAX_CASES tests, `cases` is cut and cannot be compared */
  cases_complete?: boolean;
  /** units that failed to load or build (collection errors): never counted as tests */
  load_error_count?: number;
  /** the first of them, with the runner's own first lines */
  load_errors?: readonly LoadError[];
}

export { EXIT_CODE_ONLY_PASSED };

/** The summary of an `exit_code` preset: no counts, only the exit status will be judged. */
export function exitCodeOnlySummary(): TestSummary {
  return {
    summary_found: false,
    discovered: 0,
    passed: 0,
    failed: 0,
    cancelled: 0,
    skipped: 0,
    todo: 0,
    files_without_tests: [],
    problem: null,
    exit_code_only: true,
  };
}

/** What the sandbox says about the run itself, whatever the output format. */
export interface TestRunFacts {
  exit_code: number | null;
  timed_out: boolean;
  /** the run was stopped by a cancel (user or shutdown) */
  cancelled: boolean;
  /** the runner's output was cut: its summary cannot be trusted */
  truncated: boolean;
  /** the signal that ended the runner, when one did (e.g. SIGKILL from the OOM killer) */
  signal?: string | null;
  /** the whole sandbox stopped under the command: no status came back */
  sandbox_lost?: boolean;
  /** the limits the sandbox saw reached, in words (run-tests.ts limitsReached), or null */
  limits_note?: string | null;
}

export type TestVerdictKind =
  /** every discovered test ran and passed, exit 0 */
  | "passed"
  /** the runner looked successful (exit 0, nothing failed) but no test passed: 0 discovered, no summary, all skipped */
  | "false_green"
  | "failed"
  | "cancelled";

export interface TestVerdict {
  green: boolean;
  kind: TestVerdictKind;
  /** one line for the model, the user and the evidence: why (not) green */
  message: string;
}

const verdict = (kind: TestVerdictKind, message: string): TestVerdict => ({ green: kind === "passed", kind, message });

export function judgeTestRun(run: TestRunFacts, s: TestSummary): TestVerdict {
  const v = judgeCounts(run, s);
  // what the sandbox itself saw (a limit reached) explains a red run; it never makes one green
  return v.green || !run.limits_note ? v : { ...v, message: `${v.message}; ${run.limits_note}` };
}

/**
 * An exit-code-only run after the rules every run shares (cancel, timeout, lost
 * sandbox, cut output): a killed runner or any exit but 0 failed; exit 0 passed,
 * with a verdict that says no test was counted. It is never a false green: there
 * was no count to be missing.
 */
function judgeExitCode(run: TestRunFacts): TestVerdict {
  if (run.signal) return verdict("failed", `the test command was killed by ${run.signal} (exit code only; no test count was available)`);
  if (run.exit_code !== 0) return verdict("failed", `the test command exited with code ${run.exit_code} (exit code only; no test count was available)`);
  return verdict("passed", EXIT_CODE_ONLY_PASSED);
}

function judgeCounts(run: TestRunFacts, s: TestSummary): TestVerdict {
  if (run.cancelled) return verdict("cancelled", "cancelled");
  if (run.timed_out) return verdict("failed", "timed out");
  if (run.sandbox_lost) return verdict("failed", "the sandbox stopped while the tests ran; no status came back");
  if (run.truncated) return verdict("failed", "runner output was truncated; the summary cannot be trusted");
  if (s.exit_code_only) return judgeExitCode(run);
  const nothingFailed = s.failed === 0 && s.cancelled === 0;
  // exit 0 with nothing failed and nothing passed: the runner claims a success that did not happen
  const looksGreen = run.exit_code === 0 && nothingFailed && s.passed === 0;
  const notGreen = (message: string) => verdict(looksGreen ? "false_green" : "failed", message);
  const killed = run.signal ? `the test runner was killed by ${run.signal}` : null;
  if (!s.summary_found) return notGreen(killed ? `${killed} before its summary` : (s.problem ?? "no test summary"));
  if (s.discovered === 0 && s.files_without_tests.length > 0) {
    return notGreen(`no test ran: ${s.files_without_tests.length} test file(s) exited without running a test (e.g. code they import exits the process)`);
  }
  if (s.discovered === 0) return notGreen(`no tests were discovered (a green run with 0 tests is not a pass; exit code ${run.exit_code})`);
  if (!nothingFailed) return notGreen(`${s.failed + s.cancelled} of ${s.discovered} tests failed${s.cancelled > 0 ? ` (${s.cancelled} cancelled)` : ""}`);
  if (run.exit_code !== 0) return notGreen(killed ?? `the runner exited with code ${run.exit_code} (${s.passed}/${s.discovered} reported passed)`);
  if (s.skipped > 0 || s.todo > 0) {
    return notGreen(`${s.passed}/${s.discovered} tests passed; ${s.skipped} skipped and ${s.todo} todo do not count as passed`);
  }
  if (s.passed !== s.discovered) return notGreen(`${s.passed}/${s.discovered} tests passed`);
  return verdict("passed", "passed");
}
