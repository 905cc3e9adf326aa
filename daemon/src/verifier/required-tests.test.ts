import { describe, expect, it } from "vitest";
import { checkRequiredTests, describeRequiredFailures, withRequired } from "./required-tests.js";

const F = "tests/test_a.py::test_fixed";
const P = "tests/test_a.py::TestOld::test_kept[1]";

describe("checkRequiredTests: a task's FAIL_TO_PASS / PASS_TO_PASS against the result's tests", () => {
  it("a task's must_pass is held as FAIL_TO_PASS: a test failing at the baseline that the task names must pass", () => {
    const r = checkRequiredTests({ must_pass: ["bug"], FAIL_TO_PASS: ["bug"] }, [{ id: "bug", outcome: "failed" }]);
    expect(r).toEqual({ fail_to_pass: { success: [], failure: ["bug"] }, pass_to_pass: { success: [], failure: [] } });
    expect(checkRequiredTests({}, [{ id: "bug", outcome: "failed" }])).toBeNull();
  });

  it("splits each list into the ids that passed and every other one", () => {
    const r = checkRequiredTests({ FAIL_TO_PASS: [F], PASS_TO_PASS: [P, "gone"] }, [
      { id: F, outcome: "passed" },
      { id: P, outcome: "failed" },
    ]);
    expect(r).toEqual({ fail_to_pass: { success: [F], failure: [] }, pass_to_pass: { success: [], failure: [P, "gone"] } });
  });

  it("as SWE-bench grades: a FAIL_TO_PASS test skipped, errored or absent is a failure (a skip shows no fix)", () => {
    const r = checkRequiredTests({ FAIL_TO_PASS: [F, "e", "absent"] }, [
      { id: F, outcome: "skipped" },
      { id: "e", outcome: "error" },
    ]);
    expect(r?.fail_to_pass).toEqual({ success: [], failure: [F, "e", "absent"] });
  });

  it("as SWE-bench grades: a PASS_TO_PASS test skipped is kept (not a regression), errored or absent is a failure", () => {
    const r = checkRequiredTests({ PASS_TO_PASS: [P, "e", "absent"] }, [
      { id: P, outcome: "skipped" },
      { id: "e", outcome: "error" },
    ]);
    expect(r?.pass_to_pass).toEqual({ success: [P], failure: ["e", "absent"] });
  });

  it("a report that lists no tests (cases undefined) fails every listed id, never passes them", () => {
    expect(checkRequiredTests({ FAIL_TO_PASS: [F], PASS_TO_PASS: [P] }, undefined)).toEqual({
      fail_to_pass: { success: [], failure: [F] },
      pass_to_pass: { success: [], failure: [P] },
    });
  });

  it("a test reported once passed and once failed (a rerun) is not a pass", () => {
    const r = checkRequiredTests({ PASS_TO_PASS: [P] }, [
      { id: P, outcome: "failed" },
      { id: P, outcome: "passed" },
    ]);
    expect(r?.pass_to_pass.failure).toEqual([P]);
  });

  it("a task without lists has nothing to check", () => {
    expect(checkRequiredTests({}, [{ id: F, outcome: "passed" }])).toBeNull();
  });

  it("the detail line names the first failing ids of each list, and nothing when all passed", () => {
    const r = checkRequiredTests({ FAIL_TO_PASS: ["a", "b", "c", "d"], PASS_TO_PASS: [P] }, [{ id: P, outcome: "passed" }])!;
    expect(describeRequiredFailures(r)).toBe("required tests: FAIL_TO_PASS 4 not passing: a, b, c, …");
    expect(describeRequiredFailures(checkRequiredTests({ PASS_TO_PASS: [P] }, [{ id: P, outcome: "passed" }])!)).toBeNull();
  });

  it("withRequired keeps a comparison the Verifier made, or makes a bare one that says no baseline was compared", () => {
    const required = checkRequiredTests({ FAIL_TO_PASS: [F] }, undefined)!;
    const bare = withRequired(undefined, required);
    expect(bare).toMatchObject({ baseline: "unavailable", fail_to_pass: [], required });
    expect(withRequired({ ...bare, baseline: "compared", fail_to_pass: [F] }, required)).toMatchObject({ baseline: "compared", fail_to_pass: [F], required });
  });
});
