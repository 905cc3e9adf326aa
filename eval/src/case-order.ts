import type { LoadedCase } from "./case-load.js";

/**
 * The order `eval run` starts cases in: longest expected first (LPT). With N
 * workers, a long case started last runs alone while the other workers have
 * nothing left: in the shipped suite the go case (about a third of a c1 run)
 * sorted last by name, so concurrency 2 spent its last ~40 s on one worker.
 * Started first, it overlaps the short cases instead. At concurrency 1 the
 * order changes nothing but the report's timestamps (results keep suite order).
 *
 * The estimate needs no earlier run: the seconds the task's author allows its
 * sandbox commands (the verify preset's timeout for each run_tests/run_command
 * the replay makes and for the Verifier's own run, plus the verify commands'
 * and the hidden acceptance's). It ranks; it never limits anything. Ties keep
 * the suite's (name) order.
 */
export function expectedCostS(c: LoadedCase): number {
  const t = c.task;
  const preset = t.test_presets[t.verify_preset]?.timeout_seconds ?? 60;
  const sandboxCalls = c.replay.decisions.filter((d) => d.kind === "tool" && (d.call.name === "run_tests" || d.call.name === "run_command")).length;
  const extra = (t.verify_commands ?? []).reduce((s, v) => s + v.timeout_seconds, 0);
  return preset * (sandboxCalls + 1) + extra + (t.acceptance?.timeout_seconds ?? 0);
}

/** The items by their case's expected cost, longest first; a stable sort, so ties keep their order. */
export function longestFirst<T extends { c: LoadedCase }>(items: readonly T[]): T[] {
  return items
    .map((item, i) => ({ item, i, cost: expectedCostS(item.c) }))
    .sort((a, b) => b.cost - a.cost || a.i - b.i)
    .map((x) => x.item);
}
