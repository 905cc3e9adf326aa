import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isMiniAgentError } from "../../daemon/src/errors.js";
import type { DockerExecutor } from "../../daemon/src/sandbox/docker-executor.js";
import { containerExecutor, expectStatus, leftovers, LINKCHECK, service, tempDir } from "./harness.js";

process.env.TESTCONTAINERS_RYUK_DISABLED = "true";

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    if (isMiniAgentError(err)) return err.code;
    throw err;
  }
  return "no error";
}

describe("approvals bind one action, one workspace state", () => {
  let root: string;
  let executor: DockerExecutor;
  const runIds: string[] = [];
  let n = 0;

  beforeAll(async () => {
    root = tempDir("approvals");
    executor = await containerExecutor(path.join(root, "image"));
  });
  afterAll(async () => {
    expect(await leftovers(runIds)).toEqual([]);
    fs.rmSync(root, { recursive: true, force: true });
  });

  async function start(stateDir = path.join(root, `state-${++n}`)) {
    const runs = service(stateDir, executor);
    const workspace = path.join(root, `ws-${++n}`);
    const created = await runs.createRun({ workspace, fixtureDir: LINKCHECK, model: "replay", trustReplayFile: false, backend: "container" });
    runIds.push(created.run_id);
    const pending = expectStatus(await runs.settled(created.run_id), "awaiting_approval").pending_action!;
    return { runs, stateDir, workspace, runId: created.run_id, pending };
  }

  it("a rejection is persisted with its reason, told to the model, and survives a restart on the same state dir", async () => {
    const { runs, stateDir, workspace, runId, pending } = await start();
    await runs.reject(runId, pending.action_id, "put the test somewhere else");
    const next = expectStatus(await runs.settled(runId), "awaiting_approval");
    expect(next.pending_action?.path).toBe("src/linkcheck.js");
    await runs.shutdown();

    const again = service(stateDir, executor);
    await again.recoverAtStartup();
    const view = again.getRun(runId);
    expect(view.status).toBe("awaiting_approval");
    expect(view.counters.writes).toBe(0);
    const rejected = again.ledger.findAction(runId, pending.action_id)!;
    expect(rejected.status).toBe("rejected");
    expect(again.ledger.findApproval(runId, pending.action_id)).toMatchObject({ decision: "rejected", reason: "put the test somewhere else" });
    const told = again.ledger.listMessages(runId).find((m) => m.role === "tool" && m.result.call_id === pending.call_id);
    expect(told).toMatchObject({ role: "tool", result: { ok: false, error: { code: "approval_rejected" } } });
    expect(fs.existsSync(path.join(workspace, pending.path))).toBe(false);
    // a decided action cannot be decided again, before or after the restart
    expect(await codeOf(again.approve(runId, pending.action_id))).toBe("approval_stale");
    const recorded = (await again.events(runId, 0, 0)).filter((e) => e.type === "approval_recorded");
    expect(recorded.map((e) => e.payload)).toEqual([{ decision: "rejected", reason: "put the test somewhere else", by: "user" }]);
    await again.shutdown();
  });

  it("approving after the workspace changed is approval_stale: the external edit is kept, nothing is written, the model is told to re-read", async () => {
    const { runs, workspace, runId, pending } = await start();
    const src = path.join(workspace, "src/linkcheck.js");
    const edited = fs.readFileSync(src, "utf8") + "\n// the user's own edit\n";
    fs.writeFileSync(src, edited);

    expect(await codeOf(runs.approve(runId, pending.action_id))).toBe("approval_stale");
    expect(fs.readFileSync(src, "utf8")).toBe(edited);
    expect(fs.existsSync(path.join(workspace, pending.path))).toBe(false);
    const done = await runs.settled(runId);
    expect(done.counters.writes).toBe(0);
    const events = await runs.events(runId, 0, 0);
    expect(events.some((e) => e.type === "action_intent")).toBe(false);
    const told = runs.ledger.listMessages(runId).find((m) => m.role === "tool" && m.result.call_id === pending.call_id);
    expect(told).toMatchObject({ result: { ok: false, error: { code: "approval_stale" } } });
    expect(runs.ledger.findAction(runId, pending.action_id)?.status).toBe("stale");
    await runs.shutdown();
  });

  it("approving another action id than the pending one is refused and changes nothing (no approving ahead, no approve-all)", async () => {
    const { runs, runId, pending } = await start();
    await runs.approve(runId, pending.action_id);
    const second = expectStatus(await runs.settled(runId), "awaiting_approval").pending_action!;
    const lastSeq = runs.getRun(runId).last_seq;

    expect(await codeOf(runs.approve(runId, pending.action_id))).toBe("approval_stale");
    expect(await codeOf(runs.approve(runId, "act_0123456789abcdef0123456789abcdef"))).toBe("approval_unknown");
    const after = runs.getRun(runId);
    expect(after.status).toBe("awaiting_approval");
    expect(after.pending_action?.action_id).toBe(second.action_id);
    expect(after.last_seq).toBe(lastSeq);
    expect(after.counters.writes).toBe(1);
    await runs.cancel(runId);
    await runs.shutdown();
  });

  it("a tampered action record in the ledger is approval_stale and nothing is written", async () => {
    const { runs, workspace, runId, pending } = await start();
    const row = runs.ledger.db.prepare("SELECT record FROM actions WHERE run_id = ? AND action_id = ?").get(runId, pending.action_id) as { record: string };
    const rec = JSON.parse(row.record);
    rec.prepared.new_content = "process.exit(0)\n";
    runs.ledger.db.prepare("UPDATE actions SET record = ? WHERE run_id = ? AND action_id = ?").run(JSON.stringify(rec), runId, pending.action_id);

    expect(await codeOf(runs.approve(runId, pending.action_id))).toBe("approval_stale");
    expect(fs.existsSync(path.join(workspace, pending.path))).toBe(false);
    await runs.settled(runId);
    await runs.shutdown();
  });
});
