import { describe, expect, it } from "vitest";
import { EXIT_CODE_ONLY_PASSED, exitCodeOnlySummary, judgeTestRun, type TestRunFacts, type TestSummary, type TestVerdictKind } from "./test-verdict.js";

const RUN: TestRunFacts = { exit_code: 0, timed_out: false, cancelled: false, truncated: false };

/** A consistent summary: discovered is always the sum, as every parser must report it. */
function summary(
  c: { passed?: number; failed?: number; cancelled?: number; skipped?: number; todo?: number; files_without_tests?: string[] } = {},
): TestSummary {
  const n = { passed: 0, failed: 0, cancelled: 0, skipped: 0, todo: 0, ...c };
  return {
    summary_found: true,
    discovered: n.passed + n.failed + n.cancelled + n.skipped + n.todo,
    ...n,
    files_without_tests: c.files_without_tests ?? [],
    problem: null,
  };
}
const NO_SUMMARY: TestSummary = { ...summary(), summary_found: false, problem: "no node:test summary in the output" };

const cases: Array<[string, Partial<TestRunFacts>, TestSummary, TestVerdictKind]> = [
  ["3 passed, exit 0", {}, summary({ passed: 3 }), "passed"],
  ["regression: 2 passed + 1 skipped is not green (run_tests used to say green)", {}, summary({ passed: 2, skipped: 1 }), "failed"],
  ["2 passed + 1 todo", {}, summary({ passed: 2, todo: 1 }), "failed"],
  ["every test skipped, exit 0", {}, summary({ skipped: 3 }), "false_green"],
  ["every test todo, exit 0", {}, summary({ todo: 2 }), "false_green"],
  ["0 discovered, exit 0", {}, summary(), "false_green"],
  ["0 discovered, exit 1", { exit_code: 1 }, summary(), "failed"],
  ["a file that exited without running a test", {}, summary({ files_without_tests: ["/workspace/tests/a.js"] }), "false_green"],
  ["no summary, exit 0", {}, NO_SUMMARY, "false_green"],
  ["no summary, exit 1", { exit_code: 1 }, NO_SUMMARY, "failed"],
  ["1 failed, exit 1", { exit_code: 1 }, summary({ passed: 2, failed: 1 }), "failed"],
  ["1 failed despite exit 0", {}, summary({ passed: 2, failed: 1 }), "failed"],
  ["a cancelled test", { exit_code: 1 }, summary({ passed: 2, cancelled: 1 }), "failed"],
  ["all passed but exit 1", { exit_code: 1 }, summary({ passed: 3 }), "failed"],
  ["all passed but no exit code (killed)", { exit_code: null }, summary({ passed: 3 }), "failed"],
  ["all passed but timed out", { timed_out: true }, summary({ passed: 3 }), "failed"],
  ["all passed but the output was truncated", { truncated: true }, summary({ passed: 3 }), "failed"],
  ["all passed but the run was cancelled", { cancelled: true }, summary({ passed: 3 }), "cancelled"],
  ["timed out with 0 discovered", { timed_out: true, exit_code: null }, summary(), "failed"],
];

describe("judgeTestRun: the one verdict rule for run_tests and the Verifier", () => {
  for (const [what, run, s, kind] of cases) {
    it(`${what} -> ${kind}`, () => {
      const v = judgeTestRun({ ...RUN, ...run }, s);
      expect(v.kind).toBe(kind);
      expect(v.green).toBe(kind === "passed");
      expect(v.message.length).toBeGreaterThan(0);
    });
  }

  it("names the skipped and todo counts when they are why a run is not green", () => {
    expect(judgeTestRun(RUN, summary({ passed: 2, skipped: 1, todo: 1 })).message).toMatch(/2\/4 tests passed; 1 skipped and 1 todo/);
  });

  it("a summary whose counts do not cover every discovered test is never green", () => {
    // a future parser that forgets a category must not turn that gap into a pass
    expect(judgeTestRun(RUN, { ...summary({ passed: 2 }), discovered: 3 }).green).toBe(false);
  });
});

describe("judgeTestRun: an exit_code preset (no test count exists)", () => {
  const only = exitCodeOnlySummary();

  it("exit 0 is green and says, word for word, that no test was counted (never 'N tests passed' or '0/0')", () => {
    const v = judgeTestRun(RUN, only);
    expect(v).toEqual({ green: true, kind: "passed", message: "tests passed by exit code only; no test count was available" });
    expect(EXIT_CODE_ONLY_PASSED).toBe(v.message);
  });

  it("regression: 0 discovered with exit 0 is not refused as a false green when the preset has no count by design", () => {
    expect(judgeTestRun(RUN, only).kind).not.toBe("false_green");
  });

  it("exit 1 is a failure that names the code and that it was exit-code only", () => {
    const v = judgeTestRun({ ...RUN, exit_code: 1 }, only);
    expect(v).toMatchObject({ green: false, kind: "failed" });
    expect(v.message).toBe("the test command exited with code 1 (exit code only; no test count was available)");
    expect(v.message).not.toMatch(/\d+\/\d+|tests? passed/);
  });

  const shared: Array<[string, Partial<TestRunFacts>, TestVerdictKind, RegExp]> = [
    ["timed out", { timed_out: true, exit_code: null }, "failed", /timed out/],
    ["output truncated, exit 0", { truncated: true }, "failed", /truncated/],
    ["the sandbox was lost", { sandbox_lost: true, exit_code: null }, "failed", /sandbox stopped/],
    ["killed by SIGKILL", { exit_code: null, signal: "SIGKILL" }, "failed", /killed by SIGKILL/],
    ["cancelled", { cancelled: true }, "cancelled", /cancelled/],
  ];
  for (const [what, run, kind, said] of shared) {
    it(`${what} -> ${kind}, as for every run`, () => {
      const v = judgeTestRun({ ...RUN, ...run }, only);
      expect(v.kind).toBe(kind);
      expect(v.message).toMatch(said);
    });
  }
});
