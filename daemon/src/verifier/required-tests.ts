import type { TestDelta } from "../contracts/run-view.js";
import type { TaskSpec } from "../contracts/task-spec.js";
import type { TestCase } from "../contracts/test-report.js";

/**
 * A task's own lists (`FAIL_TO_PASS`, `PASS_TO_PASS`, as SWE-bench states an
 * instance) checked against the result's tests, id by id, by SWE-bench's own
 * rule (swebench/harness/grading.py get_eval_tests_report, PASS_AND_FAIL):
 *   FAIL_TO_PASS  success: passed; failure: failed, error, skipped, or absent
 *                 (a skipped test shows no fix)
 *   PASS_TO_PASS  success: passed or skipped (a skip is not a regression);
 *                 failure: failed, error, or absent (a renamed or deleted test
 *                 proves nothing)
 * Where the two differ: SWE-bench counts an xfail as passed, and our parsers
 * report xfail as skipped (it did not pass), so an xfail FAIL_TO_PASS test
 * fails here; and a test reported twice (a rerun plugin) counts by its worst
 * outcome here, by its last line there.
 *
 * `cases` absent (a report that names no tests, or a runner whose parser does
 * not list them): no listed test is known to have run, so every one fails.
 */
export type RequiredTests = NonNullable<TestDelta["required"]>;

type Seen = "passed" | "skipped" | "failed";

/** Each id's worst outcome: any failed or error is failed, else any passed is passed, else skipped. */
function outcomes(cases: readonly TestCase[] | undefined): Map<string, Seen> {
  const out = new Map<string, Seen>();
  for (const c of cases ?? []) {
    const now: Seen = c.outcome === "failed" || c.outcome === "error" ? "failed" : c.outcome;
    const was = out.get(c.id);
    if (was === "failed" || (was === "passed" && now === "skipped")) continue;
    out.set(c.id, now);
  }
  return out;
}

export function checkRequiredTests(
  task: Pick<TaskSpec, "FAIL_TO_PASS" | "PASS_TO_PASS" | "must_pass">,
  cases: readonly TestCase[] | undefined,
): RequiredTests | null {
  // `must_pass` is our own word for the same demand: a test that must pass after the run, whatever it was before
  const f2p = [...new Set([...(task.FAIL_TO_PASS ?? []), ...(task.must_pass ?? [])])];
  const p2p = task.PASS_TO_PASS ?? [];
  if (f2p.length === 0 && p2p.length === 0) return null;
  const seen = outcomes(cases);
  const split = (ids: readonly string[], ok: (s: Seen | undefined) => boolean) => {
    const success: string[] = [];
    const failure: string[] = [];
    for (const id of ids) (ok(seen.get(id)) ? success : failure).push(id);
    return { success, failure };
  };
  return {
    fail_to_pass: split(f2p, (s) => s === "passed"),
    pass_to_pass: split(p2p, (s) => s === "passed" || s === "skipped"),
  };
}

/** The detail line of a failed check: the first failing ids of each list, never more than a few. */
export function describeRequiredFailures(r: RequiredTests, shown = 3): string | null {
  const parts: string[] = [];
  for (const [name, list] of [
    ["FAIL_TO_PASS", r.fail_to_pass.failure],
    ["PASS_TO_PASS", r.pass_to_pass.failure],
  ] as const) {
    if (list.length === 0) continue;
    const first = list.slice(0, shown).join(", ");
    parts.push(`${name} ${list.length} not passing: ${first}${list.length > shown ? ", …" : ""}`);
  }
  return parts.length === 0 ? null : `required tests: ${parts.join("; ")}`;
}

/** `compare` with the required block set: the comparison the Verifier made, or a bare one that says no baseline was compared. */
export function withRequired(compare: TestDelta | undefined, required: RequiredTests): TestDelta {
  if (compare) return { ...compare, required };
  const lists = {
    fail_to_pass: [],
    pass_to_pass: [],
    pass_to_fail: [],
    fail_to_fail: [],
    new_passed: [],
    new_failed: [],
    skipped_before: [],
    skipped_new: [],
    disappeared: [],
  };
  return { baseline: "unavailable", baseline_note: "no baseline run was compared; only the task's listed tests were checked", ...lists, counts: {}, required };
}
