import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pino } from "pino";
import { afterAll, describe, expect, it } from "vitest";
import type { OrchestratorName } from "../../daemon/src/contracts/run.js";
import { createRunService, type RunServiceImpl } from "../../daemon/src/runtime/service-impl.js";
import { LocalExecutor } from "../../daemon/src/sandbox/local-executor.js";
import { LINKCHECK } from "../runtime/harness.js";

/**
 * A model may propose a call id it used before. The SDK carries only the id
 * to our tools, so the host must answer the NEW proposal, not find the old
 * answer and skip it (which ran the call later, uncounted, as a "dangling"
 * call). Real ledger, trusted_local, a replay file of our own.
 */
const roots: string[] = [];
const services: RunServiceImpl[] = [];
afterAll(async () => {
  for (const s of services) await s.shutdown();
  for (const r of roots) fs.rmSync(r, { recursive: true, force: true });
});

async function run(orchestrator: OrchestratorName, replayFile: string) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "sdk-calls-"));
  roots.push(root);
  const svc = createRunService({ stateDir: path.join(root, "state"), executorFactory: () => new LocalExecutor(), logger: pino({ level: "silent" }) });
  services.push(svc);
  const created = await svc.createRun({
    workspace: path.join(root, "ws"),
    fixtureDir: LINKCHECK,
    model: "replay",
    replayPath: replayFile,
    trustReplayFile: true,
    backend: "trusted_local",
    orchestrator,
  });
  const view = await svc.settled(created.run_id);
  const events = await svc.events(created.run_id, 0, 0);
  return { view, types: events.map((e) => e.type), observed: events.filter((e) => e.type === "tool_observed").map((e) => [e.call_id, e.payload.ok]) };
}

describe("agents-sdk: a call id used twice", () => {
  it("the second proposal is proposed, counted and answered in its own turn, as in the manual loop (regression: the old answer was taken for it)", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sdk-calls-replay-"));
    roots.push(dir);
    const replay = path.join(dir, "replay.json");
    const read = (p: string) => ({ kind: "tool", call: { call_id: "call_same", name: "read_file", arguments: { path: p } } });
    fs.writeFileSync(replay, JSON.stringify({ schema_version: 1, decisions: [read("src/linkcheck.js"), read("notes.txt"), { kind: "final", text: "done" }] }));
    const [manual, sdk] = await Promise.all([run("manual", replay), run("agents-sdk", replay)]);
    expect(sdk.view.counters.tool_calls).toBe(2);
    expect(sdk.observed).toEqual([
      ["call_same", true],
      ["call_same", true],
    ]);
    expect({ status: sdk.view.status, reason: sdk.view.reason, counters: { ...sdk.view.counters, elapsed_ms: 0 }, types: sdk.types }).toEqual({
      status: manual.view.status,
      reason: manual.view.reason,
      counters: { ...manual.view.counters, elapsed_ms: 0 },
      types: manual.types,
    });
  });
});
