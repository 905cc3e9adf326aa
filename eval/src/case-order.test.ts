import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadSuite } from "./case-load.js";
import { expectedCostS, longestFirst } from "./case-order.js";

const EVALS = path.resolve(__dirname, "../../evals");

describe("eval run's case order", () => {
  it("regression: the shipped suite's go case (the longest) is started first, not last by name, so concurrency 2 does not end on one busy worker", async () => {
    const { cases } = await loadSuite([EVALS]);
    expect(cases.at(-1)?.id).toBe("wordwrap-canonical");
    const order = longestFirst(cases.map((c) => ({ c }))).map((x) => x.c.id);
    expect(order.slice(0, 2)).toEqual(["wordwrap-canonical", "semverlite-canonical"]);
    // every case is still run exactly once
    expect([...order].sort()).toEqual(cases.map((c) => c.id).sort());
  });

  it("ranks by the sandbox seconds the task allows: one more run_tests in the replay costs one more verify-preset timeout", async () => {
    const { cases } = await loadSuite([EVALS]);
    const byId = new Map(cases.map((c) => [c.id, c]));
    // final at once: only the Verifier's run (60) and acceptance (60)
    expect(expectedCostS(byId.get("linkcheck-final-without-work")!)).toBe(120);
    // two run_tests in the replay: 60 * 3 + 60
    expect(expectedCostS(byId.get("linkcheck-canonical")!)).toBe(240);
  });

  it("ties keep the suite's order", async () => {
    const { cases } = await loadSuite([EVALS]);
    const ties = cases.filter((c) => expectedCostS(c) === 120).map((c) => c.id);
    expect(ties.length).toBeGreaterThan(1);
    const ordered = longestFirst(cases.map((c) => ({ c })))
      .map((x) => x.c.id)
      .filter((id) => ties.includes(id));
    expect(ordered).toEqual(ties);
  });
});
