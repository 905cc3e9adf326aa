import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ApiResponse } from "../contracts/api-responses.js";
import type { VerificationEvidence } from "../contracts/run-view.js";
import { TaskSpec } from "../contracts/task-spec.js";
import { Ledger } from "../store/ledger.js";
import type { RunRecord, RunState } from "../store/records.js";
import { runView } from "./run-view.js";

/**
 * The run view as the daemon builds it from a real ledger, and as the client
 * parses it: every fact behind a verdict must survive both steps.
 */
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function ledgerWith(state: Partial<RunState>, status: "failed" | "budget_exhausted", reason: string): Ledger {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mini-agent-view-"));
  dirs.push(dir);
  const ledger = new Ledger(path.join(dir, "ledger.sqlite"), () => 42);
  const task = TaskSpec.parse({
    schema_version: 1,
    name: "t",
    task: "do it",
    writable: ["src/**"],
    test_presets: { unit: { command: ["node", "--test"] } },
    verify_preset: "unit",
  });
  const record: RunRecord = {
    schema_version: 1,
    task,
    workspace: "/w",
    control_dir: "/c",
    fixture_dir: null,
    model: "replay",
    backend: "container",
    replay_path: "/r.json",
    replay_trusted: false,
    budgets: { ...task.budgets, tool_calls: 40 },
  };
  ledger.insertRun({
    run_id: "run_1",
    created_at: 1,
    status,
    reason,
    record,
    state: {
      schema_version: 1,
      counters: { model_turns: 3, tool_calls: 40, writes: 1, elapsed_ms: 5000, prompt_tokens: 0, completion_tokens: 0 },
      stop: { cancelled: false, timed_out: false, exhausted: null },
      interrupted_from: null,
      pending_action_id: null,
      last_tool: "run_tests",
      last_plan: null,
      tests: null,
      verification: null,
      ...state,
    },
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
};

describe("the run view", () => {
  it("regression: the Verifier's details were dropped between the ledger and the client (every evidence field survives)", () => {
    const ledger = ledgerWith({ verification: EVIDENCE }, "failed", "protected_path_changed");
    const view = runView(ledger, "run_1");
    expect(view.verification).toEqual(EVIDENCE);
    // what the client does with the daemon's answer: nothing may be lost in its parse
    const parsed = ApiResponse.parse(JSON.parse(JSON.stringify({ kind: "run", run: view })));
    expect(parsed).toEqual({ kind: "run", run: view });
    ledger.close();
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
