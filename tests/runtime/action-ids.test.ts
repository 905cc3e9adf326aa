import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRunService, type RunServiceImpl } from "../../daemon/src/runtime/service-impl.js";
import { LocalExecutor } from "../../daemon/src/sandbox/local-executor.js";
import { defaultToolPort } from "../../daemon/src/runtime/tools-port.js";
import { validateToolCall } from "../../daemon/src/tools/validate.js";
import { expectStatus, LINKCHECK, tempDir } from "./harness.js";

/**
 * Action ids against a real ledger (SQLite) and real host processes (the
 * trusted_local backend the built-in replay may use): the same replay driven
 * in two runs must not share an id; the same run, re-read after a restart or
 * its proposal prepared again, must reproduce its ids.
 */
let root: string;
let n = 0;
const services: RunServiceImpl[] = [];

beforeAll(() => {
  root = tempDir("action-ids");
});
afterAll(async () => {
  for (const s of services) await s.shutdown().catch(() => undefined);
  fs.rmSync(root, { recursive: true, force: true });
});

function open(stateDir: string): RunServiceImpl {
  const s = createRunService({ stateDir, executorFactory: () => new LocalExecutor() });
  services.push(s);
  return s;
}

async function firstProposal(runs: RunServiceImpl) {
  const created = await runs.createRun({
    workspace: path.join(root, `ws-${++n}`),
    fixtureDir: LINKCHECK,
    model: "replay",
    trustReplayFile: false,
    backend: "trusted_local",
  });
  const view = expectStatus(await runs.settled(created.run_id), "awaiting_approval");
  return { runId: created.run_id, pending: view.pending_action! };
}

describe("action ids", () => {
  it("regression: the same replay in two runs gave both proposals the same action id; now each run's ids are its own", async () => {
    const runs = open(path.join(root, "state-two-runs"));
    const a = await firstProposal(runs);
    const b = await firstProposal(runs);
    // the same call of the same replay, the same content...
    expect(b.pending.call_id).toBe(a.pending.call_id);
    expect(runs.ledger.findAction(b.runId, b.pending.action_id)!.record.args_digest).toBe(
      runs.ledger.findAction(a.runId, a.pending.action_id)!.record.args_digest,
    );
    // ...but two actions an audit can tell apart
    expect(b.pending.action_id).not.toBe(a.pending.action_id);
    const ids = (runId: string) =>
      runs.ledger.db.prepare("SELECT action_id FROM events WHERE run_id = ? AND action_id IS NOT NULL").all(runId) as Array<{ action_id: string }>;
    expect(ids(a.runId).map((r) => r.action_id)).toEqual([a.pending.action_id]);
    expect(ids(b.runId).map((r) => r.action_id)).toEqual([b.pending.action_id]);
    for (const r of [a, b]) await runs.cancel(r.runId);
  });

  it("the same run reproduces its ids: after a restart the pending id holds and is approved, and preparing the same call again gives the same id", async () => {
    const stateDir = path.join(root, "state-restart");
    const first = open(stateDir);
    const { runId, pending } = await firstProposal(first);
    await first.shutdown();

    const again = open(stateDir);
    await again.recoverAtStartup();
    expect(again.getRun(runId).pending_action?.action_id).toBe(pending.action_id);

    // the proposal prepared again from its stored call, in the same run and workspace: the id a replayed turn gets
    const row = again.ledger.findAction(runId, pending.action_id)!;
    const call = validateToolCall({ call_id: row.record.call_id, name: row.record.tool, arguments: row.record.args });
    if (!call.ok) throw new Error("stored call does not validate");
    const run = again.ledger.getRun(runId);
    const ctx = { task: run.record.task, workspaceRoot: run.record.workspace, controlDir: run.record.control_dir };
    const replayed = await defaultToolPort().prepare(call, ctx, runId);
    expect(replayed.ok && replayed.action.action_id).toBe(pending.action_id);

    await again.approve(runId, pending.action_id);
    const next = expectStatus(await again.settled(runId), "awaiting_approval");
    expect(next.pending_action!.action_id).not.toBe(pending.action_id);
    const events = await again.events(runId, 0, 0);
    const firstAction = events.filter((e) => e.action_id === pending.action_id).map((e) => e.type);
    expect(firstAction).toEqual(["approval_requested", "approval_recorded", "action_intent", "action_written", "action_receipt"]);
    await again.cancel(runId);
  });
});
