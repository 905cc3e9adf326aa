import type { TestDelta } from "../contracts/run-view.js";
import type { TaskSpec } from "../contracts/task-spec.js";
import type { TestCase } from "../contracts/test-report.js";

/**
 * A task's own lists (`FAIL_TO_PASS`, `PASS_TO_PASS`, as SWE-bench states an
 * instance) checked against the result's tests, id by id: `success` holds the
 * ids that passed, `failure` every other one. A listed id the result does not
 * name is a failure (a renamed or deleted test proves nothing), and so is a
 * skipped one: a skip never passes in mini-agent (tools/test-verdict.ts), and a
 * skipped FAIL_TO_PASS test shows no fix. (SWE-bench itself leaves a skipped
 * test out of both lists; verifier/swebench-status.ts says where that differs.)
 *
 * `cases` absent (a report that names no tests, or a runner whose parser does
 * not list them): no listed test is known to have passed, so every one fails.
 */
export type RequiredTests = NonNullable<TestDelta["required"]>;

export function checkRequiredTests(task: Pick<TaskSpec, "FAIL_TO_PASS" | "PASS_TO_PASS">, cases: readonly TestCase[] | undefined): RequiredTests | null {
  const f2p = task.FAIL_TO_PASS ?? [];
  const p2p = task.PASS_TO_PASS ?? [];
  if (f2p.length === 0 && p2p.length === 0) return null;
  const passed = new Set<string>();
  // a test reported twice (a parametrised id repeated by a rerun plugin) passes only if no report of it failed
  const notPassed = new Set<string>();
  for (const c of cases ?? []) (c.outcome === "passed" ? passed : notPassed).add(c.id);
  const split = (ids: readonly string[]) => {
    const success: string[] = [];
    const failure: string[] = [];
    for (const id of ids) (passed.has(id) && !notPassed.has(id) ? success : failure).push(id);
    return { success, failure };
  };
  return { fail_to_pass: split(f2p), pass_to_pass: split(p2p) };
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
