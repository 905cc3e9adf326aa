import { describe, expect, it } from "vitest";
import { type RunView, VerificationEvidence } from "../../daemon/src/contracts/run-view.js";
import { VERIFIER_REASON_KINDS } from "../../daemon/src/contracts/verifier-reason.js";
import { progressLine, statusJson } from "./render.js";
import { whyLine } from "./why.js";

/** The why line for every way a run can end, from hand-built views (the e2e test shows it end to end). */
const TESTS_3_3: VerificationEvidence["tests"] = { discovered: 3, passed: 3, failed: 0, exit_code: 0, timed_out: false, truncated: false };

function evidence(over: Partial<VerificationEvidence>): VerificationEvidence {
  return {
    workspace_digest: "d".repeat(64),
    protected_paths_changed: [],
    tests: TESTS_3_3,
    acceptance: { passed: ["a", "b", "c", "d"], failed: [], error: null },
    passed: false,
    reason: "verification_failed",
    details: [],
    changed_path_count: 2,
    ...over,
  };
}

function view(over: Partial<RunView>): RunView {
  return {
    run_id: "run_1",
    status: "failed",
    reason: "verification_failed",
    task: "t",
    workspace: "/w",
    model: "replay",
    backend: "container",
    counters: { model_turns: 5, tool_calls: 4, writes: 2, elapsed_ms: 12_300, prompt_tokens: 0, completion_tokens: 0 },
    last_tool: "run_tests",
    tests: { discovered: 3, passed: 3, failed: 0 },
    pending_action: null,
    verification: null,
    exhausted_budget: null,
    last_seq: 30,
    ...over,
  };
}

const failed = (v: Partial<VerificationEvidence>) => whyLine(view({ verification: evidence(v), reason: v.reason ?? "verification_failed" }));

describe("the one-line why", () => {
  it("regression: a cancelled run printed 'cancelled: cancelled'; a reason that adds something is kept", () => {
    expect(whyLine(view({ status: "cancelled", reason: "cancelled" }))).toBe("cancelled");
    expect(whyLine(view({ status: "cancelled", reason: null }))).toBe("cancelled");
    expect(whyLine(view({ status: "cancelled", reason: "cancelled (deadline also passed)" }))).toBe("cancelled: cancelled (deadline also passed)");
  });

  it("regression: a failed verification said only 'failed: verification_failed'; it names the hidden cases that failed", () => {
    const line = failed({ acceptance: { passed: ["root_ok", "root_missing", "nested_ok", "nested_anchor"], failed: ["edges_trimmed"], error: null } });
    expect(line).toBe("failed: hidden acceptance 4/5 passed (edges_trimmed failed); candidate tests 3/3 passed");
  });

  it("names the protected paths that changed", () => {
    const line = failed({ reason: "protected_path_changed", protected_paths_changed: ["tests/test_root.js"] });
    expect(line).toBe("failed: protected path changed (tests/test_root.js); hidden acceptance 4/4 passed; candidate tests 3/3 passed");
  });

  it("a long list of paths shows five and how many more", () => {
    const paths = Array.from({ length: 8 }, (_, i) => `p${i}`);
    expect(failed({ reason: "protected_path_changed", protected_paths_changed: paths })).toContain("(p0, p1, p2, p3, p4 and 3 more)");
  });

  it("says a green was false, and why", () => {
    const tests = { discovered: 0, passed: 0, failed: 0, exit_code: 0, timed_out: false, truncated: false };
    const line = failed({ reason: "false_green", tests, false_green: "0 tests discovered (exit code 0)", acceptance: null });
    expect(line).toBe("failed: false green: 0 tests discovered (exit code 0)");
  });

  it("a false green whose test files match nothing: the tests never ran, so no counts are claimed", () => {
    const tests = { discovered: 0, passed: 0, failed: 0, exit_code: null, timed_out: false, truncated: false };
    const line = failed({ reason: "false_green", tests, false_green: "the preset's test files match nothing in the workspace", acceptance: null });
    expect(line).toBe("failed: false green: the preset's test files match nothing in the workspace");
  });

  it("says no_changes when the run changed nothing", () => {
    const line = failed({
      changed_path_count: 0,
      tests: { ...TESTS_3_3, discovered: 2, passed: 2 },
      acceptance: { passed: ["root_link_ok", "root_missing", "nested_ok"], failed: ["nested_missing", "nested_anchor_parent"], error: null },
    });
    expect(line).toBe(
      "failed: no_changes (the workspace is as the run found it); hidden acceptance 3/5 passed (nested_missing, nested_anchor_parent failed); candidate tests 2/2 passed",
    );
  });

  it("evidence recorded before changed_path_count existed claims nothing about changes", () => {
    const v = evidence({ acceptance: { passed: [], failed: ["x"], error: null } });
    delete v.changed_path_count;
    expect(whyLine(view({ verification: v }))).not.toContain("no_changes");
  });

  it("names the budget that ran out, its use and limit, and the command that resumes with more", () => {
    const line = whyLine(
      view({ status: "budget_exhausted", reason: "budget_exhausted:tool_calls", exhausted_budget: { name: "tool_calls", used: 40, limit: 40 } }),
    );
    expect(line).toBe("budget exhausted: tool_calls (40/40); resume with more budget: mini-agent-client resume run_1 --max-tool-calls 80");
  });

  it("the total time budget in seconds, with the socket the user gave repeated in the command", () => {
    const run = view({
      status: "budget_exhausted",
      reason: "budget_exhausted:total_seconds",
      exhausted_budget: { name: "total_seconds", used: 901.2, limit: 900 },
    });
    expect(whyLine(run, "--socket /tmp/d.sock")).toBe(
      "budget exhausted: total_seconds (901.2/900 s); resume with more budget: mini-agent-client resume --socket /tmp/d.sock run_1 --max-seconds 1800",
    );
  });

  it("candidate tests that failed, timed out or were cut off say so", () => {
    expect(failed({ tests: { ...TESTS_3_3, passed: 2, failed: 1, exit_code: 1 } })).toContain("candidate tests 2/3 passed, runner exited 1");
    expect(failed({ tests: { ...TESTS_3_3, timed_out: true, exit_code: null } })).toContain("candidate tests timed out");
    expect(failed({ tests: { ...TESTS_3_3, truncated: true } })).toContain("candidate test output truncated");
  });

  it("an acceptance protocol error and a verification error are named", () => {
    expect(failed({ reason: "acceptance_protocol_error", acceptance: { passed: [], failed: [], error: "case nested_ok reported twice" } })).toBe(
      "failed: hidden acceptance protocol error: case nested_ok reported twice; candidate tests 3/3 passed",
    );
    const tests = { discovered: 0, passed: 0, failed: 0, exit_code: null, timed_out: false, truncated: false };
    expect(failed({ reason: "verification_error:image_missing", tests, acceptance: null })).toBe("failed: verification error: image_missing");
  });

  it("a failure the Verifier did not judge shows the recorded reason", () => {
    expect(whyLine(view({ reason: "model_error: the provider answered 503" }))).toBe("failed: model_error: the provider answered 503");
  });

  it("completed runs keep the Verifier's figures", () => {
    const v = evidence({ passed: true, reason: null, acceptance: { passed: ["a", "b", "c", "d", "e"], failed: [], error: null } });
    expect(whyLine(view({ status: "completed", reason: "verified by the host", verification: v }))).toBe(
      "completed: verified by the host Verifier (tests 3/3 passed, acceptance 5/5 cases passed); 2 write(s)",
    );
  });

  it("control characters in a path or an error never reach the terminal", () => {
    const line = failed({ reason: "protected_path_changed", protected_paths_changed: ["evil\x1b[2J\nname"] });
    expect(line).toContain("evil\\x1b[2J\\x0aname");
    expect(line).not.toMatch(/[\x00-\x1f]/);
  });

  it("--json carries the whole view (details included) and the same why line", () => {
    const run = view({ verification: evidence({ details: ["hidden acceptance case(s) failed: x"], acceptance: { passed: [], failed: ["x"], error: null } }) });
    const json = statusJson(run);
    expect(json).toMatchObject({ ...run, action_id: null, why: whyLine(run) });
    expect((json.verification as VerificationEvidence).details).toEqual(["hidden acceptance case(s) failed: x"]);
  });

  describe("an exit-code-only verify preset (no test count exists)", () => {
    const EXIT_ONLY = { discovered: 0, passed: 0, failed: 0, exit_code: 0, timed_out: false, truncated: false, exit_code_only: true };

    it("regression: a completed exit-code-only run read 'tests 0/0 passed'; it says passed by exit code only", () => {
      const line = whyLine(
        view({ status: "completed", reason: null, verification: evidence({ passed: true, reason: null, tests: EXIT_ONLY, acceptance: null }) }),
      );
      expect(line).toBe("completed: verified by the host Verifier (tests passed by exit code only; no test count was available); 2 write(s)");
      expect(line).not.toMatch(/\d+\/\d+/);
    });

    it("a failed one names the exit code and no count", () => {
      const line = failed({ tests: { ...EXIT_ONLY, exit_code: 2 }, acceptance: null });
      expect(line).toBe("failed: candidate tests failed by exit code only (runner exited 2; no test count was available)");
    });

    it("the progress line never shows 0/0 for it", () => {
      expect(progressLine(view({ tests: { discovered: 0, passed: 0, failed: 0, exit_code_only: true, green: true } }))).toContain(
        "tests passed by exit code only",
      );
      expect(progressLine(view({ tests: { discovered: 0, passed: 0, failed: 0, exit_code_only: true, green: false } }))).toContain(
        "tests failed by exit code only",
      );
      expect(progressLine(view({ tests: { discovered: 0, passed: 0, failed: 0, exit_code_only: true, green: true } }))).not.toContain("0/0");
    });
  });

  it("secret_in_diff names the file, line and rule of each hit, and nothing else about it", () => {
    const line = failed({
      reason: "secret_in_diff",
      diff_scan_hits: [
        { path: ".env.local", line: 2, rule: "assigned_secret" },
        { path: "src/x.js", line: 14, rule: "aws_access_key_id" },
      ],
    });
    expect(line).toBe(
      "failed: secret in the diff (.env.local line 2: assigned_secret, src/x.js line 14: aws_access_key_id); hidden acceptance 4/4 passed; candidate tests 3/3 passed",
    );
  });

  it("verify_command_failed names the red command and its exit; a completed run counts the commands that passed", () => {
    const checks = [
      { name: "policy:lint", argv: ["npx", "eslint", "."], exit_code: 0, passed: true, timed_out: false, truncated: false, duration_ms: 900, message: "ok" },
      { name: "task:tsc", argv: ["npx", "tsc"], exit_code: 2, passed: false, timed_out: false, truncated: false, duration_ms: 1200, message: "exit 2" },
    ];
    expect(failed({ reason: "verify_command_failed", verify_commands: checks })).toBe(
      "failed: verify command failed (task:tsc: exit 2); hidden acceptance 4/4 passed; candidate tests 3/3 passed",
    );
    const done = view({ status: "completed", reason: null, verification: evidence({ passed: true, reason: null, verify_commands: [checks[0]!] }) });
    expect(whyLine(done)).toBe(
      "completed: verified by the host Verifier (tests 3/3 passed, acceptance 4/4 cases passed, verify commands 1/1 passed); 2 write(s)",
    );
  });

  it("reason no_changes (a task without hidden acceptance) is said once, first", () => {
    const line = failed({ reason: "no_changes", changed_path_count: 0, acceptance: null });
    expect(line).toBe("failed: no_changes (the workspace is as the run found it); candidate tests 3/3 passed");
  });

  it("regression: a Verifier reason outside the one list is refused where the view is parsed (reasons were free strings the client matched as literals)", () => {
    const ok = VerificationEvidence.safeParse(evidence({ reason: "verification_error:baseline_missing" }));
    expect(ok.success).toBe(true);
    const made_up = VerificationEvidence.safeParse(evidence({ reason: "tests_were_sad" as VerificationEvidence["reason"] }));
    expect(made_up.success).toBe(false);
  });

  it("every reason on the one list reads as words, never as its bare code", () => {
    for (const kind of VERIFIER_REASON_KINDS) {
      const reason = kind === "verification_error" ? "verification_error:engine_unreachable" : kind;
      const line = failed({ reason, changed_path_count: kind === "no_changes" ? 0 : 2 });
      expect(line, kind).toMatch(/^failed: /);
      // a code shown as the only thing the line says is a reason nobody worded
      expect(line.replace(/^failed: /, ""), kind).not.toBe(reason);
    }
    expect(failed({ reason: "verification_error:engine_unreachable" })).toContain("verification error: engine_unreachable");
  });
});
