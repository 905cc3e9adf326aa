import { afterAll, describe, expect, it } from "vitest";
import type { Ledger } from "../store/ledger.js";
import { insertTestRun, tempLedgers } from "../store/ledger.testkit.js";
import { Trace } from "./trace.js";

/** a run_created payload that fits its schema (contracts/trace-event.ts) */
const CREATED = { task: "t", model: "replay", backend: "container" };

const ledgers = tempLedgers("mini-agent-trace-");
afterAll(() => ledgers.cleanup());

function setup(): { ledger: Ledger; trace: Trace } {
  const { ledger } = ledgers.open();
  insertTestRun(ledger);
  return { ledger, trace: new Trace(ledger, () => 7) };
}

describe("trace long-poll", () => {
  it("answers at once when events are already there", async () => {
    const { ledger, trace } = setup();
    trace.append("run_1", { type: "run_created", payload: CREATED });
    expect((await trace.wait("run_1", 0, 60_000)).map((e) => e.seq)).toEqual([1]);
    ledger.close();
  });
  it("wakes a waiting reader on the next append", async () => {
    const { ledger, trace } = setup();
    const waiting = trace.wait("run_1", 0, 60_000);
    trace.append("run_1", { type: "plan_recorded", payload: { text: "p" } });
    expect(await waiting).toEqual([{ seq: 1, type: "plan_recorded", call_id: null, action_id: null, payload: { text: "p" } }]);
    ledger.close();
  });
  it("returns an empty list when nothing arrives within the wait", async () => {
    const { ledger, trace } = setup();
    expect(await trace.wait("run_1", 0, 20)).toEqual([]);
    ledger.close();
  });
});
