import type { SweBenchStatus, TestDelta, VerificationEvidence } from "../contracts/run-view.js";
import type { TaskSpec } from "../contracts/task-spec.js";

/**
 * A run's result as SWE-bench's harness reports an instance (its
 * `report.json`: swebench/harness/grading.py get_eval_report), so the field's
 * tools read it as they read their own. One pure function of the Verifier's
 * evidence and two facts about the run's writes.
 *
 * SWE-bench's rule, mirrored:
 *   - `patch_exists`: the run changed the workspace (SWE-bench: a patch was given).
 *   - `patch_successfully_applied`: every write of the run reached the disk, and
 *     the Verifier read a test result (SWE-bench: the patch applied and the test
 *     log could be parsed). False: nothing below is judged, not resolved.
 *   - FAIL_TO_PASS success: the test passed; failure: it failed, errored, was
 *     skipped or is absent. PASS_TO_PASS success: passed or skipped; failure:
 *     failed, errored or absent (verifier/required-tests.ts holds that rule).
 *   - FAIL_TO_FAIL / PASS_TO_FAIL: SWE-bench computes them only on request
 *     (calculate_to_fail, off in its report), so for a task with its own lists
 *     they are empty, as there.
 *   - `resolved`: SWE-bench's RESOLVED_FULL: the share of FAIL_TO_PASS successes
 *     is 1 and that of PASS_TO_PASS is 1, where an empty list counts as 1.
 *
 * A task WITHOUT its own lists has no gold run to name them; they are derived
 * from the Verifier's comparison with the baseline (TestDelta):
 *   FAIL_TO_PASS  success: fail_to_pass + new_passed (tests the run made pass)
 *                 failure: new_failed + skipped_new (tests it added or touched
 *                 that do not pass; a skip the run added shows no fix)
 *   PASS_TO_PASS  success: pass_to_pass
 *                 failure: pass_to_fail + disappeared (what the run broke or removed)
 *   FAIL_TO_FAIL  failure: fail_to_fail (failing before and after: reported,
 *                 never held against the run, as in SWE-bench)
 *   PASS_TO_FAIL  empty (it names tests a gold patch breaks; there is none)
 *   skipped_before is in no list (it neither passed nor failed, before or after).
 * A delta's lists are cut at TEST_LIST_SHOWN; the resolution uses its whole
 * `counts`, so a cut list never turns a failure into a success. Without any
 * comparison (an exit-code-only preset, evidence from before comparisons were
 * kept) there are no test lists at all, and `resolved` is the Verifier's own
 * verdict: SWE-bench would call empty lists resolved, which would make every
 * exit-code-only run resolved.
 */
export interface SweBenchFacts {
  task: Pick<TaskSpec, "FAIL_TO_PASS" | "PASS_TO_PASS">;
  evidence: VerificationEvidence | null;
  /** the run wrote at least one path that differs from its baseline */
  changed: boolean;
  /** every write the run attempted reached the disk (none refused, stale, uncertain or left pending) */
  writesApplied: boolean;
}

type Split = { success: string[]; failure: string[] };
const empty = (): Split => ({ success: [], failure: [] });

/** `resolved` counts by the delta's whole sizes where a list was cut. */
function sized(delta: TestDelta, names: readonly (keyof TestDelta & string)[]): number {
  let n = 0;
  for (const name of names) n += Math.max(delta.counts[name] ?? 0, (delta[name] as string[] | undefined)?.length ?? 0);
  return n;
}

function fromDelta(d: TestDelta): { status: SweBenchStatus["tests_status"]; resolved: boolean } {
  const status = {
    FAIL_TO_PASS: { success: [...d.fail_to_pass, ...d.new_passed], failure: [...d.new_failed, ...d.skipped_new] },
    PASS_TO_PASS: { success: [...d.pass_to_pass], failure: [...d.pass_to_fail, ...d.disappeared] },
    FAIL_TO_FAIL: { success: [], failure: [...d.fail_to_fail] },
    PASS_TO_FAIL: empty(),
  };
  const resolved = sized(d, ["new_failed", "skipped_new"]) === 0 && sized(d, ["pass_to_fail", "disappeared"]) === 0;
  return { status, resolved };
}

/** Every listed id as a failure: the lists were never checked (no test result, or a result without them). */
function unchecked(task: SweBenchFacts["task"]): SweBenchStatus["tests_status"] {
  return {
    FAIL_TO_PASS: { success: [], failure: [...(task.FAIL_TO_PASS ?? [])] },
    PASS_TO_PASS: { success: [], failure: [...(task.PASS_TO_PASS ?? [])] },
    FAIL_TO_FAIL: empty(),
    PASS_TO_FAIL: empty(),
  };
}

/** SWE-bench's get_resolution_status == RESOLVED_FULL: every list's success share is 1, an empty list counting as 1. */
function fullyResolved(s: SweBenchStatus["tests_status"]): boolean {
  return s.FAIL_TO_PASS.failure.length === 0 && s.PASS_TO_PASS.failure.length === 0;
}

export function sweBenchStatus(f: SweBenchFacts): SweBenchStatus {
  const listed = (f.task.FAIL_TO_PASS?.length ?? 0) + (f.task.PASS_TO_PASS?.length ?? 0) > 0;
  const ev = f.evidence;
  // the Verifier read a result: an error before or around the tests (engine gone, baseline unreadable) is not one
  const judged = ev !== null && !(ev.reason ?? "").startsWith("verification_error");
  const applied = f.changed && f.writesApplied && judged;
  const base = { patch_exists: f.changed, patch_successfully_applied: applied };
  if (listed) {
    const required = ev?.tests.compare?.required;
    const status = applied && required ? { ...unchecked({}), FAIL_TO_PASS: required.fail_to_pass, PASS_TO_PASS: required.pass_to_pass } : unchecked(f.task);
    return { ...base, resolved: applied && required !== undefined && fullyResolved(status), tests_status: status };
  }
  const delta = ev?.tests.compare;
  if (!applied || delta === undefined) return { ...base, resolved: applied && ev?.passed === true, tests_status: unchecked({}) };
  const derived = fromDelta(delta);
  return { ...base, resolved: derived.resolved, tests_status: derived.status };
}
