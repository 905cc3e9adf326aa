import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { TaskSpec } from "../contracts/task-spec.js";
import { initialState } from "../runtime/create-run.js";
import { Ledger } from "../store/ledger.js";
import { Trace } from "./trace.js";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mini-agent-trace-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const task = TaskSpec.parse({ schema_version: 1, name: "t", task: "x", writable: ["a"], test_presets: { u: { command: ["node"] } }, verify_preset: "u" });

function setup(): { ledger: Ledger; trace: Trace } {
  const ledger = new Ledger(path.join(dir, `${Math.random()}.sqlite`));
  ledger.insertRun({
    run_id: "run_1",
    created_at: 1,
    status: "running",
    reason: null,
    state: initialState(),
    record: {
      schema_version: 1,
      task,
      workspace: "/w",
      control_dir: "/c",
      fixture_dir: null,
      model: "replay",
      backend: "container",
      replay_path: null,
      replay_trusted: false,
      budgets: task.budgets,
    },
  });
  return { ledger, trace: new Trace(ledger, () => 7) };
}

describe("trace long-poll", () => {
  it("answers at once when events are already there", async () => {
    const { ledger, trace } = setup();
    trace.append("run_1", { type: "run_created" });
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
