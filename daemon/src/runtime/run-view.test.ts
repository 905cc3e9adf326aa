import { afterEach, describe, expect, it } from "vitest";
import { ApiResponse } from "../contracts/api-responses.js";
import type { VerificationEvidence } from "../contracts/run-view.js";
import type { Ledger } from "../store/ledger.js";
import { TEST_TASK, tempLedgers, testRecord, testState } from "../store/ledger.testkit.js";
import type { RunState } from "../store/records.js";
import { runView } from "./run-view.js";

/**
 * The run view as the daemon builds it from a real ledger, and as the client
 * parses it: every fact behind a verdict must survive both steps.
 */
const ledgers = tempLedgers("mini-agent-view-");
afterEach(() => ledgers.cleanup());

function ledgerWith(state: Partial<RunState>, status: "failed" | "budget_exhausted", reason: string): Ledger {
  const { ledger } = ledgers.open(() => 42);
  ledger.insertRun({
    run_id: "run_1",
    created_at: 1,
    status,
    reason,
    record: testRecord({ replay_path: "/r.json", budgets: { ...TEST_TASK.budgets, tool_calls: 40 } }),
    state: testState({
      counters: { model_turns: 3, tool_calls: 40, writes: 1, elapsed_ms: 5000, prompt_tokens: 0, completion_tokens: 0 },
      last_tool: "run_tests",
      ...state,
    }),
  });
  return ledger;
}

const EVIDENCE: VerificationEvidence = {
  workspace_digest: "d".repeat(64),
  protected_paths_changed: ["notes.txt"],
  tests: { discovered: 3, passed: 3, failed: 0, exit_code: 0, timed_out: false, truncated: false },
  acceptance: { passed: ["root_ok"], failed: ["nested_missing"], error: null },
  passed: false,
  reason: "protected_path_changed",
  details: ["protected paths changed: notes.txt", "hidden acceptance case(s) failed: nested_missing"],
  changed_path_count: 2,
  false_green: null,
  diff_scan_hits: [{ path: "src/config.js", line: 3, rule: "aws_access_key_id" }],
  verify_commands: [
    {
      name: "task:lint",
      argv: ["npx", "eslint", "."],
      exit_code: 1,
      passed: false,
      timed_out: false,
      truncated: false,
      duration_ms: 812,
      message: "exited with code 1",
    },
  ],
};

describe("the run view", () => {
  it("regression: the Verifier's details were dropped between the ledger and the client, and its secret-scan hits were redacted to a string under a secret-looking name (every evidence field survives)", () => {
    const ledger = ledgerWith({}, "failed", "protected_path_changed");
    // stored as the Verifier step stores it: through the ledger's redaction of every state it writes
    ledger.updateRun("run_1", { state: { ...ledger.getRun("run_1").state, verification: EVIDENCE } });
    const view = runView(ledger, "run_1");
    expect(view.verification).toEqual(EVIDENCE);
    // what the client does with the daemon's answer: nothing may be lost in its parse
    const parsed = ApiResponse.parse(JSON.parse(JSON.stringify({ kind: "run", run: view })));
    expect(parsed).toEqual({ kind: "run", run: view });
    ledger.close();
  });

  it("an ended run carries its SWE-bench-shaped report, which survives the client's parse; a run still going has none", () => {
    const ledger = ledgerWith({}, "failed", "protected_path_changed");
    ledger.updateRun("run_1", { state: { ...ledger.getRun("run_1").state, verification: EVIDENCE } });
    const view = runView(ledger, "run_1");
    // no comparison in this evidence and no lists in the task: the Verifier's own verdict decides
    expect(view.swebench).toMatchObject({ patch_exists: true, patch_successfully_applied: true, resolved: false });
    expect(ApiResponse.parse(JSON.parse(JSON.stringify({ kind: "run", run: view })))).toEqual({ kind: "run", run: view });
    ledger.close();
    const going = ledgerWith({}, "running" as "failed", "");
    expect(runView(going, "run_1").swebench).toBeUndefined();
    going.close();
  });

  it("a budget-exhausted run names the budget, what was used and the limit", () => {
    const ledger = ledgerWith({ stop: { cancelled: false, timed_out: false, exhausted: "tool_calls" } }, "budget_exhausted", "budget_exhausted:tool_calls");
    expect(runView(ledger, "run_1").exhausted_budget).toEqual({ name: "tool_calls", used: 40, limit: 40 });
    ledger.close();
  });

  it("a passed deadline without a named budget is the total time, in seconds", () => {
    const ledger = ledgerWith({ stop: { cancelled: false, timed_out: true, exhausted: null } }, "budget_exhausted", "budget_exhausted:total_seconds");
    expect(runView(ledger, "run_1").exhausted_budget).toEqual({ name: "total_seconds", used: 5, limit: 900 });
    ledger.close();
  });
});
