/**
 * A run's tests against its baseline's, test by test: the field's rule
 * (SWE-bench's FAIL_TO_PASS / PASS_TO_PASS). A real project arrives with tests
 * already skipped (a flag-gated test) or failing (a test needing a network);
 * judged alone, "every discovered test ran and passed" fails such a project
 * before anyone touched it, and pushes a model to delete the skip markers. Judged
 * against the baseline, what the run CHANGED is held against it (a test it broke,
 * a test it removed, a skip it added), and what it found is listed, not blamed.
 *
 * A baseline test whose id changes from run to run (a title holding `Math.random()`
 * or the time) can never be found again by its id. The baseline is therefore run
 * twice (verifier/baseline-tests.ts) and an id seen in only one of those runs is
 * `unstable`: when the result lacks it, it is listed as such, never as
 * `disappeared`. Nothing is paired by title shape: a test the run deleted and a
 * new one that looks alike stay two tests, so a deleted stable test (failing or
 * not) is still `disappeared`, and a failing test under a new id is still
 * `new_failed`.
 *
 * Pure: lists in, lists out. The verdict that reads them is test-verdict.ts.
 */
import type { TestDelta, TestListName } from "../contracts/run-view.js";
import { TEST_LIST_NAMES, TEST_LIST_SHOWN } from "../contracts/run-view.js";
import type { CaseOutcome, TestCase } from "../contracts/test-report.js";

export type FullDelta = Record<TestListName, string[]>;

/** a failing unit (a test that failed, or one that could not load) */
const red = (o: CaseOutcome | undefined) => o === "failed" || o === "error";

/**
 * Every list in full, ids in the result's order (then the baseline's, for tests that disappeared).
 * `unstable`: baseline ids that ran in only one of the baseline's two runs.
 */
export function compareCases(before: readonly TestCase[], after: readonly TestCase[], unstable: readonly string[] = []): FullDelta {
  const d = Object.fromEntries(TEST_LIST_NAMES.map((n) => [n, [] as string[]])) as FullDelta;
  const was = new Map(before.map((c) => [c.id, c.outcome]));
  const now = new Set<string>();
  for (const c of after) {
    now.add(c.id);
    const b = was.get(c.id);
    if (c.outcome === "skipped") (b === "skipped" ? d.skipped_before : d.skipped_new).push(c.id);
    else if (c.outcome === "passed") {
      if (b === undefined) d.new_passed.push(c.id);
      else if (b === "passed") d.pass_to_pass.push(c.id);
      // skipped before and passing now: it ran and passed; nothing failed before it, so it is new evidence
      else if (b === "skipped") d.new_passed.push(c.id);
      else d.fail_to_pass.push(c.id);
    } else if (b === undefined || b === "skipped") d.new_failed.push(c.id);
    else if (b === "passed") d.pass_to_fail.push(c.id);
    else if (red(b)) d.fail_to_fail.push(c.id);
  }
  const changing = new Set(unstable);
  for (const c of before) if (!now.has(c.id)) (changing.has(c.id) ? d.unstable : d.disappeared).push(c.id);
  return d;
}

/** What the evidence keeps: each list cut to TEST_LIST_SHOWN, every list's whole size in `counts`. */
export function boundDelta(full: FullDelta, baseline: Pick<TestDelta, "baseline" | "baseline_note" | "baseline_cached">): TestDelta {
  const lists = Object.fromEntries(TEST_LIST_NAMES.map((n) => [n, full[n].slice(0, TEST_LIST_SHOWN)])) as Record<TestListName, string[]>;
  const counts = Object.fromEntries(TEST_LIST_NAMES.map((n) => [n, full[n].length]));
  return { ...baseline, ...lists, counts };
}

/** "a, b, c and 4 more": ids named in a verdict line, a few, cut short (they come from test code). */
export function nameIds(ids: readonly string[], total = ids.length, shown = 3): string {
  const cut = ids.slice(0, shown).map((id) => (id.length > 120 ? `${id.slice(0, 120)}…` : id));
  return total > cut.length ? `${cut.join(", ")} and ${total - cut.length} more` : cut.join(", ");
}
