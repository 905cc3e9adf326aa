import { afterAll, describe, expect, it } from "vitest";
import { TaskSpec } from "../contracts/task-spec.js";
import type { Ledger } from "../store/ledger.js";
import { TEST_TASK, tempLedgers, testRecord, testState } from "../store/ledger.testkit.js";
import { defaultViewBuilder, ledgerMessages } from "./view-input.js";

const ledgers = tempLedgers("mini-agent-view-");
afterAll(() => ledgers.cleanup());

function ledgerWithHistory(): Ledger {
  const { ledger } = ledgers.open();
  ledger.insertRun({
    run_id: "run_1",
    created_at: 1,
    status: "running",
    reason: null,
    state: testState(),
    record: testRecord({ task: TaskSpec.parse({ ...TEST_TASK, task: "fix the resolver" }) }),
  });
  ledger.appendMessage("run_1", { schema_version: 1, role: "assistant", decision: { kind: "plan", text: "read, then fix" } });
  ledger.appendMessage("run_1", {
    schema_version: 1,
    role: "assistant",
    decision: { kind: "tool", call: { call_id: "c1", name: "read_file", arguments: { path: "src/a.js" } } },
  });
  ledger.appendMessage("run_1", { schema_version: 1, role: "tool", result: { call_id: "c1", ok: true, data: { text: "x" }, error: null, truncated: false } });
  // the call answered by nothing yet (a pending approval) is never sent to a model
  ledger.appendMessage("run_1", {
    schema_version: 1,
    role: "assistant",
    decision: { kind: "tool", call: { call_id: "c2", name: "apply_patch", arguments: { path: "src/a.js" } } },
  });
  return ledger;
}

describe("model view from the ledger", () => {
  it("pairs each tool call with its result and names the tool in the result envelope", () => {
    const ledger = ledgerWithHistory();
    const msgs = ledgerMessages(ledger, "run_1");
    expect(msgs.map((m) => m.role)).toEqual(["assistant", "assistant", "tool", "assistant"]);
    expect(JSON.parse((msgs[2] as { content: string }).content)).toMatchObject({ tool: "read_file", call_id: "c1", ok: true });
    ledger.close();
  });

  it("leads with the authoritative summary, leaves unanswered calls out and generates the tool list from the schemas", () => {
    const ledger = ledgerWithHistory();
    const view = defaultViewBuilder()(ledger, "run_1", "d".repeat(64));
    expect(view.messages[0]).toMatchObject({ role: "system" });
    expect(String(view.messages[0]!.content)).toContain("fix the resolver");
    expect(String(view.messages[0]!.content)).toContain("d".repeat(64));
    expect(JSON.stringify(view.messages)).not.toContain('"c2"');
    expect(view.tools.map((t) => (t as { function: { name: string } }).function.name).sort()).toEqual([
      "apply_patch",
      "list_files",
      "read_file",
      "run_command",
      "run_tests",
      "search",
      "show_diff",
    ]);
    ledger.close();
  });

  it("regression: a trusted_local run is never offered run_command (it would have to run on the host)", () => {
    const { ledger } = ledgers.open();
    ledger.insertRun({ run_id: "run_l", created_at: 1, status: "running", reason: null, state: testState(), record: testRecord({ backend: "trusted_local" }) });
    const names = defaultViewBuilder()(ledger, "run_l", "d".repeat(64)).tools.map((t) => (t as { function: { name: string } }).function.name);
    expect(names).not.toContain("run_command");
    expect(names).toContain("run_tests");
    ledger.close();
  });
});
