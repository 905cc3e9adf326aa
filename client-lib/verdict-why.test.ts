import { describe, expect, it } from "vitest";
import { TEST_LIST_NAMES, type TestDelta, type TestListName, unstableSaid, type VerificationEvidence } from "../daemon/src/contracts/run-view.js";
import { verdictLines } from "./test-lines.js";
import { baselineFound, verdictWhy } from "./verdict-why.js";

function delta(lists: Partial<Record<TestListName, string[]>>): TestDelta {
  const full = Object.fromEntries(TEST_LIST_NAMES.map((k) => [k, lists[k] ?? []])) as Record<TestListName, string[]>;
  return { baseline: "compared", ...full, counts: Object.fromEntries(TEST_LIST_NAMES.map((k) => [k, full[k].length])) };
}

function evidence(tests: Partial<VerificationEvidence["tests"]>, passed: boolean): VerificationEvidence {
  return {
    workspace_digest: "d",
    protected_paths_changed: [],
    tests: { discovered: 0, passed: 0, failed: 0, exit_code: 0, timed_out: false, truncated: false, ...tests },
    acceptance: null,
    passed,
    reason: passed ? null : "verification_failed",
    changed_path_count: 1,
  };
}

describe("the verdict's test counts", () => {
  it("regression: tests that share a name (a table of cases printed alike) are one id in the lists; the line said 74/112 passed when all 112 passed", () => {
    // five tests ran and passed; two pairs share a name, so the lists hold three ids
    const compare = delta({ pass_to_pass: ["t > a", "t > b"], new_passed: ["t > c"], disappeared: ["t > made at 16:10:28"] });
    const failed = evidence({ discovered: 5, passed: 5, compare }, false);
    expect(verdictWhy(failed).join(" ")).toContain("candidate tests 5/5 passed; 1 from before did not run (t > made at 16:10:28)");
    const completed = evidence({ discovered: 5, passed: 5, compare: delta({ pass_to_pass: ["t > a", "t > b"], new_passed: ["t > c"] }) }, true);
    expect(verdictLines({ verification: completed }).join("\n")).toContain("tests against the baseline: 5/5 passed");
  });
});

describe("a runner that failed outside its tests", () => {
  it("regression: every test passed and vitest exited 1 (its typecheck could not write); the headline said only 'candidate tests 488/488 passed', now it says why it failed", () => {
    const compare = delta({ pass_to_pass: ["t > a"], new_passed: ["t > b"] });
    const runner_error = { summary: "the runner exited with code 1 though no test failed", lines: ["Error: EROFS"] };
    const failed = evidence({ discovered: 2, passed: 2, exit_code: 1, compare, runner_error }, false);
    expect(verdictWhy(failed).join(" ")).toContain("candidate tests 2/2 passed; the runner exited with code 1 though no test failed");
  });
});

describe("test ids that changed between the baseline's two runs", () => {
  it("regression: ids unstable at the baseline were said as 'from before did not run'; they are named as unstable and never as disappeared", () => {
    const compare = delta({ pass_to_pass: ["t > a"], new_passed: ["t > drawn 0.9"], unstable: ["t > drawn 0.1", "t > drawn 0.5"] });
    const completed = evidence({ discovered: 2, passed: 2, compare }, true);
    const lines = verdictLines({ verification: completed }).join("\n");
    expect(lines).toContain(`  ${unstableSaid(2)}: t > drawn 0.1, t > drawn 0.5`);
    expect(lines).not.toContain("disappeared");
    expect(baselineFound(compare)).toContain(`${unstableSaid(2)}: t > drawn 0.1, t > drawn 0.5`);
  });

  it("regression: 3 tests whose titles change were said as '6 test id(s) changed', read as 6 unstable tests; status and why say that such a test shows one id in each run", () => {
    const unstable = ["t > at 1", "t > at 2", "t > at 3", "t > at 4", "t > at 5", "t > at 6"];
    const compare = delta({ pass_to_pass: ["t > a"], new_passed: ["t > at 7", "t > at 8", "t > at 9"], unstable });
    const lines = verdictLines({ verification: evidence({ discovered: 4, passed: 4, compare }, true) }).join("\n");
    const said =
      "6 test ids changed between two runs of the baseline (unstable: a test whose title changes shows one id in each run; not looked for, not held against the run)";
    expect(lines).toContain(`  ${said}: t > at 1, t > at 2, t > at 3, t > at 4, t > at 5 and 1 more`);
    expect(baselineFound(compare)).toContain(said);
    expect(lines).not.toMatch(/6 (unstable )?tests/);
    expect(unstableSaid(1)).toMatch(/^1 test id changed/);
  });

  it("evidence kept before the baseline ran twice (no unstable list) still reads", () => {
    const { unstable: _u, ...old } = delta({ pass_to_pass: ["t > a"] });
    const lines = verdictLines({ verification: evidence({ discovered: 1, passed: 1, compare: { ...old, counts: { pass_to_pass: 1 } } }, true) });
    expect(lines.join("\n")).toContain("tests against the baseline: 1/1 passed");
  });
});
