import { describe, expect, it } from "vitest";
import type { TestCase } from "../contracts/test-report.js";
import { unstableSaid } from "../contracts/run-view.js";
import { compareCases } from "./test-compare.js";
import { judgeAgainstBaseline, testTouched, type BaselineTests, type TestRunFacts, type TestSummary } from "./test-verdict.js";

const RUN: TestRunFacts = { exit_code: 0, timed_out: false, cancelled: false, truncated: false };

function suite(cases: Array<[string, TestCase["outcome"]]>): TestSummary & { cases: TestCase[] } {
  const list = cases.map(([id, outcome]) => ({ id, outcome }));
  const n = (o: string) => list.filter((c) => c.outcome === o).length;
  const errors = n("error");
  return {
    summary_found: true,
    discovered: list.length - errors,
    passed: n("passed"),
    failed: n("failed"),
    cancelled: 0,
    skipped: n("skipped"),
    todo: 0,
    files_without_tests: [],
    problem: null,
    cases: list,
    cases_complete: true,
    load_error_count: errors,
    load_errors: list.filter((c) => c.outcome === "error").map((c) => ({ unit: c.id, message: "ModuleNotFoundError: No module named 'yaml'" })),
  };
}
const base = (cases: Array<[string, TestCase["outcome"]]>): BaselineTests => ({ cases: suite(cases).cases, note: null, cached: false });

describe("compareCases: the result's tests against the baseline's", () => {
  it("puts each test in exactly one list", () => {
    const before = suite([
      ["a", "passed"],
      ["b", "failed"],
      ["c", "skipped"],
      ["d", "passed"],
      ["e", "failed"],
      ["gone", "passed"],
      ["s2", "passed"],
    ]).cases;
    const after = suite([
      ["a", "passed"],
      ["b", "passed"],
      ["c", "skipped"],
      ["d", "failed"],
      ["e", "failed"],
      ["new1", "passed"],
      ["new2", "error"],
      ["s2", "skipped"],
    ]).cases;
    expect(compareCases(before, after)).toEqual({
      pass_to_pass: ["a"],
      fail_to_pass: ["b"],
      skipped_before: ["c"],
      pass_to_fail: ["d"],
      fail_to_fail: ["e"],
      new_passed: ["new1"],
      new_failed: ["new2"],
      skipped_new: ["s2"],
      disappeared: ["gone"],
      unstable: [],
    });
  });
});

describe("judgeAgainstBaseline: the one rule, test by test", () => {
  it("regression: a pre-existing skip no longer fails a run that broke nothing (212 passed + 1 skipped was 'failed')", () => {
    const before = base([
      ["t1", "passed"],
      ["flag_gated", "skipped"],
    ]);
    const v = judgeAgainstBaseline(
      RUN,
      suite([
        ["t1", "passed"],
        ["flag_gated", "skipped"],
      ]),
      before,
    );
    expect(v.green).toBe(true);
    expect(v.message).toContain("1 skipped before your change, 0 new skips");
    expect(v.delta?.skipped_before).toEqual(["flag_gated"]);
  });

  it("a skip the run added fails and is named", () => {
    const v = judgeAgainstBaseline(
      RUN,
      suite([
        ["t1", "passed"],
        ["t2", "skipped"],
      ]),
      base([
        ["t1", "passed"],
        ["t2", "passed"],
      ]),
    );
    expect(v.green).toBe(false);
    expect(v.message).toMatch(/skipped_new.*t2/);
  });

  it("breaking an unrelated passing test fails, naming it (pass_to_fail)", () => {
    const v = judgeAgainstBaseline(
      { ...RUN, exit_code: 1 },
      suite([
        ["t1", "failed"],
        ["t2", "passed"],
      ]),
      base([
        ["t1", "passed"],
        ["t2", "failed"],
      ]),
    );
    expect(v.green).toBe(false);
    expect(v.message).toMatch(/pass_to_fail\): t1/);
    expect(v.delta?.fail_to_pass).toEqual(["t2"]);
  });

  it("a test failing before and still failing is listed, not held against the run (exit 1 included)", () => {
    const v = judgeAgainstBaseline(
      { ...RUN, exit_code: 1 },
      suite([
        ["t1", "passed"],
        ["net", "failed"],
      ]),
      base([
        ["t1", "passed"],
        ["net", "failed"],
      ]),
    );
    expect(v.green).toBe(true);
    expect(v.message).toMatch(/1 failing before your change and still failing/);
  });

  it("a test the run deleted fails the run (disappeared)", () => {
    const v = judgeAgainstBaseline(
      RUN,
      suite([["t1", "passed"]]),
      base([
        ["t1", "passed"],
        ["t2", "failed"],
      ]),
    );
    expect(v.green).toBe(false);
    expect(v.message).toMatch(/disappeared\): t2/);
  });

  it("a collection error the run caused is said as one, never as a failed test count", () => {
    const v = judgeAgainstBaseline(
      { ...RUN, exit_code: 2 },
      suite([
        ["t1", "passed"],
        ["tests/test_y.py", "error"],
      ]),
      base([["t1", "passed"]]),
    );
    expect(v.green).toBe(false);
    expect(v.message).toMatch(/1 collection error .*tests\/test_y.py/);
  });

  it("a runner that exits non-zero with nothing failing is not green", () => {
    const v = judgeAgainstBaseline({ ...RUN, exit_code: 3 }, suite([["t1", "passed"]]), base([["t1", "passed"]]));
    expect(v.green).toBe(false);
    expect(v.message).toMatch(/exited with code 3 though no test failed/);
  });

  it("without a baseline list every test is new: a skip then blocks, and the verdict says why", () => {
    const v = judgeAgainstBaseline(
      RUN,
      suite([
        ["t1", "passed"],
        ["t2", "skipped"],
      ]),
      { cases: null, note: "the baseline's tests timed out", cached: false },
    );
    expect(v.green).toBe(false);
    expect(v.delta?.baseline).toBe("unavailable");
    expect(v.message).toContain("the baseline's tests timed out");
  });

  it("what the sandbox says comes first: a timed-out or truncated result is never green", () => {
    const s = suite([["t1", "passed"]]);
    expect(judgeAgainstBaseline({ ...RUN, timed_out: true }, s, base([["t1", "passed"]])).green).toBe(false);
    expect(judgeAgainstBaseline({ ...RUN, truncated: true }, s, base([["t1", "passed"]])).green).toBe(false);
  });

  it("regression: collection errors from before that stop the runner before any test ran were 'verified' (0/0 passed, 2 failing before); a run in which no test ran is never green", () => {
    const broken: Array<[string, TestCase["outcome"]]> = [
      ["tests/test_timed.py", "error"],
      ["tests/test_url_safe.py", "error"],
    ];
    const v = judgeAgainstBaseline({ ...RUN, exit_code: 2 }, suite(broken), base(broken));
    expect(v.green).toBe(false);
    expect(v.message).toMatch(/^no test ran: the runner stopped at 2 collection errors .* before any test ran/);
    // the broken files are still named as failing before, not blamed on the run
    expect(v.delta?.fail_to_fail).toEqual(["tests/test_timed.py", "tests/test_url_safe.py"]);
  });

  it("0 tests after the run is a false green, as in the absolute rule", () => {
    const v = judgeAgainstBaseline(RUN, suite([]), base([]));
    expect(v.kind).toBe("false_green");
  });
});

describe("test ids that change from run to run (the baseline runs twice)", () => {
  // a title holding Math.random() or the time: each baseline run named it differently
  const twoRuns = (cases: Array<[string, TestCase["outcome"]]>, unstable: string[]): BaselineTests => ({ ...base(cases), unstable });

  it("regression: every test passed but 'tests from before did not run' failed the verdict, their titles held random values; an id seen in only one baseline run is unstable, not disappeared", () => {
    const v = judgeAgainstBaseline(
      RUN,
      suite([
        ["adds", "passed"],
        ["random 0.93", "passed"],
      ]),
      twoRuns(
        [
          ["adds", "passed"],
          ["random 0.12", "passed"],
          ["random 0.57", "passed"],
        ],
        ["random 0.12", "random 0.57"],
      ),
    );
    expect(v.green).toBe(true);
    expect(v.delta).toMatchObject({ disappeared: [], unstable: ["random 0.12", "random 0.57"], new_passed: ["random 0.93"], counts: { unstable: 2 } });
    // the words status and why use (contracts' unstableSaid), so the model reads what the user reads
    expect(v.message).toContain(`${unstableSaid(2)}: random 0.12, random 0.57`);
    expect(v.message).toContain("2 test ids changed between two runs of the baseline (unstable: a test whose title changes shows one id in each run");
  });

  it("a deleted stable test still fails the verdict (disappeared), failing at the baseline or not, beside unstable ids", () => {
    const v = judgeAgainstBaseline(
      RUN,
      suite([
        ["adds", "passed"],
        ["random 0.93", "passed"],
      ]),
      twoRuns(
        [
          ["adds", "passed"],
          ["needs network", "failed"],
          ["random 0.12", "passed"],
          ["random 0.57", "passed"],
        ],
        ["random 0.12", "random 0.57"],
      ),
    );
    expect(v.green).toBe(false);
    expect(v.delta).toMatchObject({ disappeared: ["needs network"], unstable: ["random 0.12", "random 0.57"] });
    expect(v.message).toMatch(/1 test\(s\) from before no longer ran \(disappeared\): needs network/);
  });

  it("a failing test under a new id fails the verdict even where unstable ids failed before: nothing is paired by title shape", () => {
    const v = judgeAgainstBaseline(
      { ...RUN, exit_code: 1 },
      suite([
        ["adds", "passed"],
        ["random 0.93", "failed"],
      ]),
      twoRuns(
        [
          ["adds", "passed"],
          ["random 0.12", "failed"],
          ["random 0.57", "failed"],
        ],
        ["random 0.12", "random 0.57"],
      ),
    );
    expect(v.green).toBe(false);
    expect(v.delta).toMatchObject({ new_failed: ["random 0.93"], unstable: ["random 0.12", "random 0.57"], disappeared: [] });
    expect(v.message).toMatch(/new_failed; a failing test whose id changes from run to run is never matched with one from before/);
  });

  it("an unstable id the result names again is compared as any other (failing in the one run that had it: fail_to_fail)", () => {
    const d = compareCases(
      [
        ["adds", "passed"],
        ["pick 1", "failed"],
        ["pick 2", "passed"],
      ].map(([id, outcome]) => ({ id: id!, outcome: outcome as TestCase["outcome"] })),
      [
        { id: "adds", outcome: "passed" },
        { id: "pick 1", outcome: "failed" },
      ],
      ["pick 1", "pick 2"],
    );
    expect(d).toMatchObject({ pass_to_pass: ["adds"], fail_to_fail: ["pick 1"], unstable: ["pick 2"], disappeared: [] });
  });
});

describe("a task that requires a regression test", () => {
  const opts = (changed: string[]) => ({ regressionTest: { changed } });
  it("passes with a new passing test in a file the run created", () => {
    const v = judgeAgainstBaseline(
      RUN,
      suite([
        ["tests/test_a.py::test_old", "passed"],
        ["tests/test_bug.py::test_bug", "passed"],
      ]),
      base([["tests/test_a.py::test_old", "passed"]]),
      opts(["src/a.py", "tests/test_bug.py"]),
    );
    expect(v.green).toBe(true);
  });

  it("fails when the only fixed or new tests live in files the run did not touch", () => {
    const v = judgeAgainstBaseline(
      RUN,
      suite([
        ["tests/test_a.py::test_old", "passed"],
        ["tests/test_b.py::test_x", "passed"],
      ]),
      base([
        ["tests/test_a.py::test_old", "passed"],
        ["tests/test_b.py::test_x", "failed"],
      ]),
      opts(["src/a.py"]),
    );
    expect(v.green).toBe(false);
    expect(v.message).toMatch(/requires a regression test/);
  });

  it("finds a Go test by its package folder, and a node test by its file", () => {
    expect(testTouched("example.com/m/parse/TestISOWeek", ["parse/week_test.go"])).toBe(true);
    expect(testTouched("example.com/m/other/TestX", ["parse/week_test.go"])).toBe(false);
    expect(testTouched("test/add.test.js > add > adds", ["test/add.test.js"])).toBe(true);
  });
});
