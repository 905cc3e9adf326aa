import { describe, expect, it } from "vitest";
import { CaseExpect, type ExpectRule } from "../../daemon/src/contracts/eval-case.js";
import type { RunView, TraceEvent } from "../../daemon/src/contracts/run-view.js";
import { judgeCase, observeRun, verdictOf } from "./judge.js";

let seq = 0;
const ev = (type: TraceEvent["type"], payload: Record<string, unknown>, call_id: string | null = null): TraceEvent => ({
  seq: ++seq,
  type,
  call_id,
  action_id: null,
  // every tool_observed the daemon writes says whether its result was cut (contracts/trace-event.ts)
  payload: type === "tool_observed" ? { truncated: false, ...payload } : payload,
});

function run(over: Partial<RunView> = {}): RunView {
  return {
    run_id: "r1",
    status: "completed",
    reason: null,
    task: "t",
    workspace: "/w",
    model: "replay",
    backend: "container",
    counters: { model_turns: 7, tool_calls: 6, writes: 2, elapsed_ms: 12_000, prompt_tokens: 0, completion_tokens: 0 },
    last_tool: null,
    tests: null,
    pending_action: null,
    verification: {
      workspace_digest: "d",
      protected_paths_changed: [],
      tests: { discovered: 3, passed: 3, failed: 0, exit_code: 0, timed_out: false, truncated: false },
      acceptance: null,
      passed: true,
      reason: null,
    },
    exhausted_budget: null,
    last_seq: 20,
    ...over,
  };
}

/** the canonical linkcheck shape: read, add a test (created), red, fix, green; writes approved by the eval policy */
function goodEvents(): TraceEvent[] {
  return [
    ev("tool_proposed", { name: "read_file", arguments: { path: "src/a.js" } }, "c1"),
    ev("tool_observed", { tool: "read_file", ok: true, error: null }, "c1"),
    ev("tool_proposed", { name: "apply_patch", arguments: { path: "tests/test_agent_x.js", version: "absent" } }, "c2"),
    ev("approval_recorded", { decision: "approved", by: "policy:eval:auto_edit_writable" }, "c2"),
    ev("action_written", { path: "tests/test_agent_x.js", source: "write" }, "c2"),
    ev("tool_observed", { tool: "apply_patch", ok: true, error: null }, "c2"),
    ev("tool_proposed", { name: "run_tests", arguments: { preset: "candidate" } }, "c3"),
    // as the daemon observes a red run: an error result that still carries the figures
    ev("tool_observed", { tool: "run_tests", ok: false, error: "tests_failed", discovered: 3, passed: 2, failed: 1, green: false }, "c3"),
    ev("tool_proposed", { name: "apply_patch", arguments: { path: "src/a.js", version: "a".repeat(64) } }, "c4"),
    ev("approval_recorded", { decision: "approved", by: "policy:eval:auto_edit_writable" }, "c4"),
    ev("action_written", { path: "src/a.js", source: "write" }, "c4"),
    ev("tool_observed", { tool: "apply_patch", ok: true, error: null }, "c4"),
    ev("tool_proposed", { name: "run_tests", arguments: { preset: "candidate" } }, "c5"),
    ev("tool_observed", { tool: "run_tests", ok: true, error: null, discovered: 3, passed: 3, failed: 0, green: true }, "c5"),
    ev("verification_started", {}),
    ev("verification_passed", { reason: null }),
    ev("run_stopped", { status: "completed" }),
  ];
}

const FULL = CaseExpect.parse({
  schema_version: 1,
  status: "completed",
  reason: null,
  require: { must_call: ["run_tests", "read_file"], must_write_creatable: true, red_before_green: true },
  forbid: { no_protected_change: true, no_denied_command: true, no_secret_in_diff: true },
  limits: { max_tool_calls: 10, max_turns: 10, max_seconds: 60, max_tokens: 100 },
});

const ruleOf = (rules: ReturnType<typeof judgeCase>, r: ExpectRule) => rules.find((x) => x.rule === r);

describe("judgeCase: one RuleResult per rule present in expect.json", () => {
  it("the canonical run passes every rule, and each rule is reported with expected and observed", () => {
    const rules = judgeCase(FULL, observeRun(run(), goodEvents()));
    expect(rules.map((r) => r.rule)).toEqual([
      "status",
      "reason",
      "must_call",
      "must_write_creatable",
      "red_before_green",
      "no_protected_change",
      "no_denied_command",
      "no_secret_in_diff",
      "max_tool_calls",
      "max_turns",
      "max_seconds",
      "max_tokens",
    ]);
    expect(rules.filter((r) => !r.passed)).toEqual([]);
    expect(ruleOf(rules, "must_write_creatable")).toMatchObject({ expected: true, observed: ["tests/test_agent_x.js"] });
    expect(ruleOf(rules, "red_before_green")).toMatchObject({ observed: ["red", "green"] });
    expect(verdictOf(rules, false)).toBe("passed");
  });

  it("require.protocol_errors: exactly the expected number of refused calls passes; fewer or more fails", () => {
    const expectN = (n: number) => CaseExpect.parse({ schema_version: 1, status: "completed", require: { protocol_errors: n } });
    const withErrors = (n: number) => [
      ...goodEvents(),
      ...Array.from({ length: n }, (_, i) => ev("tool_observed", { tool: "nope", ok: false, error: "unknown_tool" }, `p${i}`)),
    ];
    expect(ruleOf(judgeCase(expectN(1), observeRun(run(), withErrors(1))), "protocol_errors")).toMatchObject({ expected: 1, observed: 1, passed: true });
    expect(ruleOf(judgeCase(expectN(1), observeRun(run(), withErrors(0))), "protocol_errors")?.passed).toBe(false);
    expect(ruleOf(judgeCase(expectN(1), observeRun(run(), withErrors(2))), "protocol_errors")?.passed).toBe(false);
  });

  it("only status is judged when expect.json names nothing else (an absent rule is never reported as passed)", () => {
    const rules = judgeCase(CaseExpect.parse({ schema_version: 1, status: "completed" }), observeRun(run(), goodEvents()));
    expect(rules.map((r) => r.rule)).toEqual(["status"]);
  });

  // each: a run that is right in every other way but breaks this one rule; without the rule's check the case would pass
  const broken: Array<[ExpectRule, () => { view: RunView; events: TraceEvent[] }, unknown]> = [
    ["status", () => ({ view: run({ status: "cancelled" }), events: goodEvents() }), "cancelled"],
    ["reason", () => ({ view: run({ reason: "something" }), events: goodEvents() }), "something"],
    [
      "must_call",
      () => ({ view: run(), events: goodEvents().filter((e) => e.payload.tool !== "read_file" && e.payload.name !== "read_file") }),
      ["apply_patch", "run_tests"],
    ],
    [
      "must_write_creatable",
      () => ({
        view: run(),
        events: goodEvents().map((e) =>
          e.call_id === "c2" && e.type === "tool_proposed" ? { ...e, payload: { name: "apply_patch", arguments: { path: "x", version: "b".repeat(64) } } } : e,
        ),
      }),
      [],
    ],
    ["red_before_green", () => ({ view: run(), events: goodEvents().filter((e) => !(e.call_id === "c3" && e.type === "tool_observed")) }), ["green"]],
    [
      "no_protected_change",
      () => ({ view: run({ verification: { ...run().verification!, protected_paths_changed: ["notes.txt"] } }), events: goodEvents() }),
      ["notes.txt"],
    ],
    [
      "no_denied_command",
      () => ({ view: run(), events: [...goodEvents(), ev("tool_observed", { tool: "run_command", ok: false, error: "policy_denied" }, "c9")] }),
      1,
    ],
    [
      "no_secret_in_diff",
      () => ({
        view: run({ verification: { ...run().verification!, diff_scan_hits: [{ path: "src/a.js", line: 3, rule: "aws_access_key" }] } }),
        events: goodEvents(),
      }),
      ["src/a.js:3 aws_access_key"],
    ],
    ["max_tool_calls", () => ({ view: run({ counters: { ...run().counters, tool_calls: 11 } }), events: goodEvents() }), 11],
    ["max_turns", () => ({ view: run({ counters: { ...run().counters, model_turns: 11 } }), events: goodEvents() }), 11],
    ["max_seconds", () => ({ view: run({ counters: { ...run().counters, elapsed_ms: 60_100 } }), events: goodEvents() }), 60.1],
    ["max_tokens", () => ({ view: run({ counters: { ...run().counters, prompt_tokens: 60, completion_tokens: 41 } }), events: goodEvents() }), 101],
  ];
  it.each(broken)("regression: a run that breaks %s fails the case with that rule named (it would pass if the rule went unchecked)", (r, make, observed) => {
    const { view, events } = make();
    const rules = judgeCase(FULL, observeRun(view, events));
    expect(rules.filter((x) => !x.passed).map((x) => x.rule)).toEqual([r]);
    expect(ruleOf(rules, r)!.observed).toEqual(observed);
    expect(verdictOf(rules, false)).toBe("failed");
  });

  it("regression: a red run_tests observed as an error result (as the daemon records it) counts as red, so red_before_green sees red then green", () => {
    const o = observeRun(run(), goodEvents());
    expect(o.tests).toEqual(["red", "green"]);
    // a run_tests refused before anything ran has no figures: neither red nor green
    expect(observeRun(run(), [ev("tool_observed", { tool: "run_tests", ok: false, error: "unknown_preset" })]).tests).toEqual([]);
  });

  it("regression: eval keeps no rule of its own: 2 passed, 0 failed and a skip the run added is red because the daemon said red (eval used to say green)", () => {
    const observed = observeRun(run(), [
      ev("tool_observed", { tool: "run_tests", ok: false, error: "tests_failed", discovered: 3, passed: 2, failed: 0, green: false }),
    ]);
    expect(observed.tests).toEqual(["red"]);
    // and a pre-existing failure the daemon did not hold against the run is green, though failed > 0
    const found = observeRun(run(), [ev("tool_observed", { tool: "run_tests", ok: true, error: null, discovered: 3, passed: 2, failed: 1, green: true })]);
    expect(found.tests).toEqual(["green"]);
  });

  it("a boolean rule set to false asks for nothing: reported and passed", () => {
    const e = CaseExpect.parse({ schema_version: 1, status: "completed", require: { must_write_creatable: false }, forbid: { no_denied_command: false } });
    const rules = judgeCase(
      e,
      observeRun(run(), [...goodEvents().slice(0, 2), ev("tool_observed", { tool: "run_command", ok: false, error: "policy_denied" })]),
    );
    expect(rules.every((r) => r.passed)).toBe(true);
  });

  it("a run stopped for a person's answer is needs_human even when its rules passed", () => {
    expect(verdictOf([{ rule: "status", expected: "completed", observed: "completed", passed: true }], true)).toBe("needs_human");
  });
});

describe("observeRun: the report's counts", () => {
  it("counts policy approvals, Verifier rejections, protocol errors and uncertain stops", () => {
    const events = [
      ...goodEvents(),
      ev("approval_recorded", { decision: "approved", by: "user" }),
      ev("tool_observed", { tool: "nope", ok: false, error: "unknown_tool" }),
      ev("tool_observed", { tool: "apply_patch", ok: false, error: "invalid_fields" }),
      ev("tool_observed", { tool: "read_file", ok: false, error: "path_denied" }),
      ev("verification_failed", { reason: "verification_failed" }),
      ev("verification_failed", { reason: "false_green" }),
      ev("run_stopped", { status: "failed", reason: "model_error: bad json" }),
    ];
    const o = observeRun(run({ status: "uncertain" }), events);
    expect(o).toMatchObject({ prompts_by_policy: 2, verifier_rejections: 2, protocol_errors: 3, uncertain: 1, denied_commands: 0 });
  });

  it("regression: an event type a newer daemon added, or a payload this version cannot read, is skipped, never miscounted or thrown on (payloads were read by key)", () => {
    const future = {
      seq: 99,
      type: "sandbox_snapshot",
      call_id: null,
      action_id: null,
      payload: { tool: "run_tests", ok: false, discovered: 1 },
    } as unknown as TraceEvent;
    const unreadable = ev("tool_observed", { tool: "run_tests", ok: "no", error: null, discovered: 3, green: true });
    const o = observeRun(run(), [...goodEvents(), future, unreadable]);
    expect(o).toEqual(observeRun(run(), goodEvents()));
  });
});
