import { afterEach, describe, expect, it, vi } from "vitest";
import { tempLedgers, testRecord, testState } from "./ledger.testkit.js";
import { RunRecord, RunState } from "./records.js";

const ledgers = tempLedgers();
afterEach(() => {
  vi.restoreAllMocks();
  ledgers.cleanup();
});

describe("ledger reads", () => {
  it("regression: an unchanged run is schema-checked once, not on every read (re-validating the same JSON was the daemon's largest CPU cost in an eval run)", () => {
    const { ledger } = ledgers.open(() => 42);
    ledger.insertRun({ run_id: "run_1", created_at: 1, status: "running", reason: null, record: testRecord({ replay_path: "/r.json" }), state: testState() });
    const stateChecks = vi.spyOn(RunState, "safeParse");
    const recordChecks = vi.spyOn(RunRecord, "safeParse");
    for (let i = 0; i < 5; i++) ledger.getRun("run_1");
    expect([stateChecks.mock.calls.length, recordChecks.mock.calls.length]).toEqual([1, 1]);
    ledger.close();
  });

  it("a written change is read (and checked) again; a caller changing its copy changes nothing for the next reader", () => {
    const { ledger } = ledgers.open(() => 42);
    ledger.insertRun({ run_id: "run_1", created_at: 1, status: "running", reason: null, record: testRecord({ replay_path: "/r.json" }), state: testState() });
    const first = ledger.getRun("run_1");
    first.state.counters.tool_calls = 99;
    first.record.workspace = "/elsewhere";
    expect(ledger.getRun("run_1").state.counters.tool_calls).toBe(0);
    expect(ledger.getRun("run_1").record.workspace).not.toBe("/elsewhere");
    const stateChecks = vi.spyOn(RunState, "safeParse");
    const three = testState();
    three.counters.tool_calls = 3;
    ledger.updateRun("run_1", { state: three });
    expect(ledger.getRun("run_1").state.counters.tool_calls).toBe(3);
    expect(stateChecks).toHaveBeenCalledTimes(1);
    // a row changed behind the ledger's back to something invalid is refused, never served from memory
    ledger.db.prepare("UPDATE runs SET state = json_set(state, '$.counters.tool_calls', 'many')").run();
    expect(() => ledger.getRun("run_1")).toThrow(/malformed/);
    ledger.close();
  });

  it("regression: a state write does not re-check the unchanged record (the state changes at every step, so a cache over both missed)", () => {
    const { ledger } = ledgers.open(() => 42);
    ledger.insertRun({ run_id: "run_1", created_at: 1, status: "running", reason: null, record: testRecord({ replay_path: "/r.json" }), state: testState() });
    ledger.getRun("run_1");
    const recordChecks = vi.spyOn(RunRecord, "safeParse");
    for (let i = 1; i <= 3; i++) {
      const next = testState();
      next.counters.tool_calls = i;
      ledger.updateRun("run_1", { state: next });
      expect(ledger.getRun("run_1").state.counters.tool_calls).toBe(i);
    }
    expect(recordChecks).not.toHaveBeenCalled();
    ledger.close();
  });

  it("prepares each SQL text once, not on every call", () => {
    const { ledger } = ledgers.open(() => 42);
    ledger.insertRun({ run_id: "run_1", created_at: 1, status: "running", reason: null, record: testRecord({ replay_path: "/r.json" }), state: testState() });
    const prepare = vi.spyOn(ledger.db, "prepare");
    for (let i = 0; i < 3; i++) {
      ledger.getRun("run_1");
      ledger.appendEvent("run_1", { type: "run_created" }, 1);
    }
    expect(prepare.mock.calls.length).toBeLessThanOrEqual(3);
    ledger.close();
  });
});
