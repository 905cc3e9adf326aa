import { describe, expect, it } from "vitest";
import type { TestDelta, VerificationEvidence } from "../contracts/run-view.js";
import { checkRequiredTests, withRequired } from "./required-tests.js";
import { sweBenchStatus } from "./swebench-status.js";

const F = "tests/test_calc.py::test_divide_by_zero";
const P = "tests/test_calc.py::test_add";

function evidence(over: Partial<VerificationEvidence> = {}, compare?: TestDelta): VerificationEvidence {
  return {
    workspace_digest: "d",
    protected_paths_changed: [],
    tests: { discovered: 2, passed: 2, failed: 0, exit_code: 0, timed_out: false, truncated: false, ...(compare && { compare }) },
    acceptance: null,
    passed: true,
    reason: null,
    changed_path_count: 1,
    ...over,
  };
}

const lists = { FAIL_TO_PASS: [F], PASS_TO_PASS: [P] };
const required = (cases: { id: string; outcome: "passed" | "failed" | "skipped" | "error" }[]) => withRequired(undefined, checkRequiredTests(lists, cases)!);
const delta = (over: Partial<TestDelta>): TestDelta => ({
  ...withRequired(undefined, { fail_to_pass: { success: [], failure: [] }, pass_to_pass: { success: [], failure: [] } }),
  required: undefined,
  baseline: "compared",
  ...over,
});
const ran = { changed: true, writesApplied: true };

describe("sweBenchStatus: a run as SWE-bench's harness reports an instance", () => {
  it("a task with its own lists: resolved when every FAIL_TO_PASS and PASS_TO_PASS test passed; FAIL_TO_FAIL / PASS_TO_FAIL empty, as SWE-bench", () => {
    const s = sweBenchStatus({
      task: lists,
      evidence: evidence(
        {},
        required([
          { id: F, outcome: "passed" },
          { id: P, outcome: "passed" },
        ]),
      ),
      ...ran,
    });
    expect(s).toEqual({
      patch_exists: true,
      patch_successfully_applied: true,
      resolved: true,
      tests_status: {
        FAIL_TO_PASS: { success: [F], failure: [] },
        PASS_TO_PASS: { success: [P], failure: [] },
        FAIL_TO_FAIL: { success: [], failure: [] },
        PASS_TO_FAIL: { success: [], failure: [] },
      },
    });
  });

  it("a FAIL_TO_PASS test still failing is not resolved (SWE-bench's partial and none are both unresolved)", () => {
    const s = sweBenchStatus({
      task: lists,
      evidence: evidence(
        { passed: false, reason: "verification_failed" },
        required([
          { id: F, outcome: "failed" },
          { id: P, outcome: "passed" },
        ]),
      ),
      ...ran,
    });
    expect(s).toMatchObject({ resolved: false, patch_successfully_applied: true, tests_status: { FAIL_TO_PASS: { success: [], failure: [F] } } });
  });

  it("an empty patch: patch_exists false, nothing judged, every listed test a failure, not resolved", () => {
    const s = sweBenchStatus({
      task: lists,
      evidence: evidence({ changed_path_count: 0, passed: false, reason: "no_changes" }),
      changed: false,
      writesApplied: true,
    });
    expect(s).toMatchObject({ patch_exists: false, patch_successfully_applied: false, resolved: false });
    expect(s.tests_status.FAIL_TO_PASS.failure).toEqual([F]);
    expect(s.tests_status.PASS_TO_PASS.failure).toEqual([P]);
  });

  it("a write that did not reach the disk, or a Verifier that could not read a result, is not an applied patch and never resolved", () => {
    const ok = evidence(
      {},
      required([
        { id: F, outcome: "passed" },
        { id: P, outcome: "passed" },
      ]),
    );
    expect(sweBenchStatus({ task: lists, evidence: ok, changed: true, writesApplied: false })).toMatchObject({
      patch_successfully_applied: false,
      resolved: false,
    });
    const broken = evidence({ passed: false, reason: "verification_error:image_missing" });
    expect(sweBenchStatus({ task: lists, evidence: broken, ...ran })).toMatchObject({ patch_successfully_applied: false, resolved: false });
    expect(sweBenchStatus({ task: lists, evidence: null, ...ran })).toMatchObject({ patch_successfully_applied: false, resolved: false });
  });

  it("without its own lists, they are derived from the comparison with the baseline", () => {
    const d = delta({ fail_to_pass: ["f"], new_passed: ["n"], pass_to_pass: ["p"], fail_to_fail: ["ff"], skipped_before: ["s"] });
    expect(sweBenchStatus({ task: {}, evidence: evidence({}, d), ...ran })).toEqual({
      patch_exists: true,
      patch_successfully_applied: true,
      resolved: true,
      tests_status: {
        FAIL_TO_PASS: { success: ["f", "n"], failure: [] },
        PASS_TO_PASS: { success: ["p"], failure: [] },
        FAIL_TO_FAIL: { success: [], failure: ["ff"] },
        PASS_TO_FAIL: { success: [], failure: [] },
      },
    });
    const broke = delta({ pass_to_pass: ["p"], pass_to_fail: ["q"], disappeared: ["gone"], new_failed: ["nf"], skipped_new: ["sk"] });
    expect(sweBenchStatus({ task: {}, evidence: evidence({ passed: false }, broke), ...ran })).toMatchObject({
      resolved: false,
      tests_status: { FAIL_TO_PASS: { success: [], failure: ["nf", "sk"] }, PASS_TO_PASS: { success: ["p"], failure: ["q", "gone"] } },
    });
  });

  it("a delta list cut at its shown length still counts whole: a failure beyond the cut is never resolved", () => {
    const d = delta({ pass_to_pass: ["p"], counts: { pass_to_fail: 3 } });
    expect(sweBenchStatus({ task: {}, evidence: evidence({}, d), ...ran }).resolved).toBe(false);
  });

  it("with no comparison at all (an exit-code-only preset) there are no lists and the Verifier's verdict decides", () => {
    expect(sweBenchStatus({ task: {}, evidence: evidence({ passed: true }), ...ran }).resolved).toBe(true);
    expect(sweBenchStatus({ task: {}, evidence: evidence({ passed: false, reason: "verification_failed" }), ...ran }).resolved).toBe(false);
  });
});
