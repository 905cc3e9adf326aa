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
import { EXIT_CODE_ONLY_PASSED, unstableSaid } from "../contracts/run-view.js";
import type { LoadError, TestCase } from "../contracts/test-report.js";
import type { TestDelta } from "../contracts/run-view.js";
import { boundDelta, compareCases, nameIds, type FullDelta } from "./test-compare.js";

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
  const loadErrors = s.load_error_count ?? 0;
  // a unit that could not load is not a test: "4 collection errors", never "0/4 passed"
  if (loadErrors > 0)
    return verdict("failed", `${loadErrorWords(loadErrors)}${s.discovered > 0 ? ` (${s.passed}/${s.discovered} tests passed)` : ""}: ${loadErrorUnits(s)}`);
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

const loadErrorWords = (n: number) => `${n} collection error${n === 1 ? "" : "s"} (a test file or package that could not load)`;

function loadErrorUnits(s: TestSummary): string {
  const units = (s.load_errors ?? []).map((e) => e.unit);
  return units.length === 0 ? "see the runner's output" : nameIds(units, s.load_error_count ?? units.length);
}

/**
 * The baseline's tests as the Verifier ran them (verifier/baseline-tests.ts):
 * `cases` null when its list could not be read, and `note` says why.
 */
export interface BaselineTests {
  cases: readonly TestCase[] | null;
  note: string | null;
  /** ids in `cases` that ran in only one of the baseline's two runs (absent: one run, nothing known unstable) */
  unstable?: readonly string[];
  cached: boolean;
}

export interface BaselineOptions {
  /** the task requires a regression test: the workspace paths the run changed, to find a test it touched */
  regressionTest?: { changed: readonly string[] };
}

export interface BaselineVerdict extends TestVerdict {
  /** the lists behind the verdict; null when it was judged by the absolute rule (no per-test list) */
  delta: TestDelta | null;
}

/**
 * The verdict against the baseline (test-compare.ts), for run_tests, the Verifier
 * and eval alike. The run is green when it broke nothing that passed
 * (pass_to_fail), removed no test (disappeared; a baseline id seen in only one of
 * the baseline's two runs is `unstable` instead, and not looked for), added no failing test or
 * collection error (new_failed), added no skip (skipped_new: a skip is never a
 * pass). The tests a task names (FAIL_TO_PASS, PASS_TO_PASS, must_pass) are
 * checked id by id beside this (verifier/required-tests.ts). Tests skipped or failing at the
 * baseline are listed and not held against it. What the sandbox says about the
 * run (cancel, timeout, cut output, a lost sandbox) comes first, as in
 * judgeTestRun; a report without a per-test list is judged by judgeTestRun alone.
 */
export function judgeAgainstBaseline(run: TestRunFacts, s: TestSummary, baseline: BaselineTests, opts: BaselineOptions = {}): BaselineVerdict {
  const absolute = (note?: string): BaselineVerdict => {
    const v = judgeTestRun(run, s);
    return { ...v, message: note && !v.green ? `${v.message}; ${note}` : v.message, delta: null };
  };
  if (run.cancelled || run.timed_out || run.sandbox_lost || run.truncated || s.exit_code_only || !s.summary_found) return absolute();
  if (s.cases === undefined) return absolute();
  if (s.cases_complete === false) return absolute(`the report names more tests than can be compared one by one`);
  if (s.discovered === 0 && (s.load_error_count ?? 0) === 0) return absolute();
  const note = baseline.cases === null ? (baseline.note ?? "the baseline's tests could not be read") : null;
  const full = compareCases(baseline.cases ?? [], s.cases, baseline.unstable);
  const delta = boundDelta(full, {
    baseline: baseline.cases === null ? "unavailable" : "compared",
    ...(note !== null && { baseline_note: note }),
    baseline_cached: baseline.cached,
  });
  const blockers: string[] = [];
  // a run in which no test ran checked nothing, whatever the baseline says: collection errors from before
  // (pytest stops its whole session at the first ones) must not pass as "nothing got worse"
  if (s.discovered === 0)
    blockers.push(
      `no test ran: the runner stopped at ${loadErrorWords(s.load_error_count ?? 0)} before any test ran; a run in which no test ran verifies nothing`,
    );
  const outcome = new Map(s.cases.map((c) => [c.id, c.outcome]));
  const newErrors = full.new_failed.filter((id) => outcome.get(id) === "error");
  const newFailed = full.new_failed.filter((id) => outcome.get(id) !== "error");
  const say = (ids: string[], words: string) => ids.length > 0 && blockers.push(`${words}: ${nameIds(ids)}`);
  say(full.pass_to_fail, `${full.pass_to_fail.length} test(s) that passed before now fail (pass_to_fail)`);
  say(newErrors, loadErrorWords(newErrors.length));
  // a failing test under an id the baseline never had cannot be matched with an unstable one from before
  say(newFailed, `${newFailed.length} new failing test(s) (new_failed${unstableBefore(baseline) > 0 ? UNMATCHED : ""})`);
  // a test whose file no longer loads did not run: said with the load error, not as if the run removed it
  const unloaded = new Set(newErrors.concat(full.fail_to_fail.filter((id) => outcome.get(id) === "error")));
  const inUnloaded = (id: string) => unloaded.has(testFileOf(id));
  const lost = full.disappeared.filter(inUnloaded);
  const gone = full.disappeared.filter((id) => !inUnloaded(id));
  say(lost, `${lost.length} test(s) from before did not run because their file could not load (disappeared)`);
  say(gone, `${gone.length} test(s) from before no longer ran (disappeared)`);
  say(full.skipped_new, `${full.skipped_new.length} test(s) skipped that were not skipped before (skipped_new; a skip never passes)`);
  if (opts.regressionTest) {
    const red2green = [...full.fail_to_pass, ...full.new_passed];
    if (!red2green.some((id) => testTouched(id, opts.regressionTest!.changed)))
      blockers.push(
        `the task requires a regression test: no test in a file the run changed went from failing or absent to passing (${red2green.length} fixed or new elsewhere)`,
      );
  }
  const anyRed = s.cases.some((c) => c.outcome === "failed" || c.outcome === "error");
  if (run.exit_code !== 0 && !anyRed)
    blockers.push(run.signal ? `the test runner was killed by ${run.signal}` : `the runner exited with code ${run.exit_code} though no test failed`);
  const summary = baselineSummary(full, s, note);
  if (blockers.length > 0) {
    const v = verdict("failed", `${blockers.join("; ")} (${summary})`);
    return { ...v, message: run.limits_note ? `${v.message}; ${run.limits_note}` : v.message, delta };
  }
  return { ...verdict("passed", `passed against the baseline: ${summary}`), delta };
}

/** how many baseline ids changed between the baseline's two runs */
const unstableBefore = (b: BaselineTests) => b.unstable?.length ?? 0;

const UNMATCHED = "; a failing test whose id changes from run to run is never matched with one from before, so it counts as new";

/** The file (or Go package path) a test id begins with: before `::` (pytest) or ` > ` (node, vitest, jest). */
function testFileOf(id: string): string {
  return id.split("::")[0]!.split(" > ")[0]!;
}

/**
 * Whether a test id lives in one of the changed paths: the file before `::` or ` > `
 * (pytest, node, vitest, jest), or for Go (`module/pkg/TestName`) a changed `_test.go`
 * file in that package's folder.
 */
export function testTouched(id: string, changed: readonly string[]): boolean {
  const head = testFileOf(id);
  if (changed.includes(head)) return true;
  const pkg = head.split("/").slice(0, -1).join("/");
  return changed.some((p) => {
    if (!p.endsWith("_test.go")) return false;
    const dir = p.includes("/") ? p.slice(0, p.lastIndexOf("/")) : "";
    // a test file at the module's root belongs to the module's own package, whose import path the id alone does not tell
    return dir === "" ? true : pkg === dir || pkg.endsWith(`/${dir}`);
  });
}

/** "212 passed, 1 skipped before your change and still skipped, 0 new skips": what the model and the user read. */
function baselineSummary(d: FullDelta, s: TestSummary, note: string | null): string {
  const passed = d.pass_to_pass.length + d.fail_to_pass.length + d.new_passed.length;
  const parts = [s.discovered === 0 ? "no test ran" : `${passed}/${s.discovered} passed`];
  if (d.fail_to_pass.length > 0) parts.push(`${d.fail_to_pass.length} fixed (failing before, passing now: ${nameIds(d.fail_to_pass)})`);
  if (d.fail_to_fail.length > 0)
    parts.push(`${d.fail_to_fail.length} failing before your change and still failing (not held against it: ${nameIds(d.fail_to_fail)})`);
  parts.push(`${d.skipped_before.length} skipped before your change, ${d.skipped_new.length} new skip${d.skipped_new.length === 1 ? "" : "s"}`);
  if (d.unstable.length > 0) parts.push(`${unstableSaid(d.unstable.length)}: ${nameIds(d.unstable)}`);
  if (note !== null) parts.push(`no baseline list (${note}): every test counts as new`);
  return parts.join("; ");
}
