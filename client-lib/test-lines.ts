import { type RunView, type TestDelta, unstableSaid, type VerificationEvidence } from "../daemon/src/contracts/run-view.js";
import { oneLine, verdictWhy } from "./verdict-why.js";

/**
 * The Verifier's test verdict in lines a person reads (status, run, why): the
 * result against the baseline, list by list, and when the runner failed before
 * or outside its tests, its own first lines. These were once only JSON in the
 * trace, while the summary said "0/4 passed" for four import errors.
 */
const LIST_WORDS: Array<[keyof TestDelta & string, string, boolean]> = [
  ["pass_to_fail", "passed before, fail now", true],
  ["new_failed", "new and failing", true],
  ["disappeared", "ran before, gone now", true],
  ["skipped_new", "skipped by this run (a skip never passes)", true],
  ["fail_to_pass", "fixed (failed before, pass now)", false],
  ["fail_to_fail", "failing before the run and still failing (not held against it)", false],
  ["skipped_before", "skipped before the run and still skipped (not held against it)", false],
  // said by contracts' unstableSaid, as the Verifier's message and the why line say it: it counts ids, not tests
  ["unstable", "", false],
];

const SHOWN = 5;

/** The verdict's reasons (the why line's parts) then the test lines: what the eval report shows per case. */
export function verdictLines(run: Pick<RunView, "verification">): string[] {
  const v = run.verification;
  if (!v) return [];
  const why = v.passed ? [] : verdictWhy(v).map(oneLine);
  return [...why, ...testLines(run)].map((l) => (l.length > 1000 ? `${l.slice(0, 1000)}…` : l)).slice(0, 48);
}

export function testLines(run: Pick<RunView, "verification">): string[] {
  const v: VerificationEvidence | null = run.verification;
  if (!v) return [];
  const lines: string[] = [];
  const c = v.tests.compare;
  if (c) {
    const n = (k: string) => c.counts[k] ?? 0;
    // the runner's own counts, as the verdict line says them (the lists are by test id; tests with one name are one id)
    const ran =
      v.tests.discovered === 0 && v.tests.runner_error ? `no test ran (${v.tests.runner_error.summary})` : `${v.tests.passed}/${v.tests.discovered} passed`;
    lines.push(
      `tests against the baseline: ${ran}; ${n("skipped_before")} skipped before the run, ${n("skipped_new")} new skip${n("skipped_new") === 1 ? "" : "s"}` +
        (c.baseline === "unavailable" ? ` (no baseline list: ${c.baseline_note ?? "not read"}; every test counts as new)` : ""),
    );
    for (const [key, words] of LIST_WORDS) {
      // `unstable` is absent from evidence made before the baseline ran twice
      const ids = (c[key] as string[] | undefined) ?? [];
      const total = n(key);
      if (total === 0) continue;
      const more = total > Math.min(ids.length, SHOWN) ? ` and ${total - Math.min(ids.length, SHOWN)} more` : "";
      const head = key === "unstable" ? unstableSaid(total) : `${key} (${total}, ${words})`;
      lines.push(`  ${head}: ${ids.slice(0, SHOWN).join(", ")}${more}`);
    }
    const req = c.required;
    if (req && req.fail_to_pass.failure.length + req.pass_to_pass.failure.length > 0) {
      lines.push(`  required by the task and not passing: ${[...req.fail_to_pass.failure, ...req.pass_to_pass.failure].slice(0, SHOWN).join(", ")}`);
    }
  }
  // a verification that could not be made says why in the daemon's words (an engine or sandbox failure)
  if (v.reason?.startsWith("verification_error:")) for (const d of (v.details ?? []).slice(0, 4)) lines.push(`verification error: ${d}`);
  const e = v.tests.runner_error;
  if (e) {
    lines.push(`runner error: ${e.summary}`);
    for (const l of e.lines) lines.push(`  ${l}`);
  }
  return lines.map(oneLine);
}
