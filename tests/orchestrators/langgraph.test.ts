import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OrchestratorName } from "../../daemon/src/contracts/run.js";
import { checkpointFile } from "../../daemon/src/orchestrators/langgraph/index.js";
import { packageVersion } from "../../daemon/src/orchestrators/versions.js";
import type { DockerExecutor } from "../../daemon/src/sandbox/docker-executor.js";
import type { TraceEvent } from "../../daemon/src/runtime/service.js";
import { containerExecutor, expectStatus, leftovers, LINKCHECK, service, tempDir } from "../runtime/harness.js";

process.env.TESTCONTAINERS_RYUK_DISABLED = "true";

/**
 * The same task, the same replay, the same services: driven by the LangGraph
 * state graph it must end exactly as our own loop does (issue 14).
 */
describe("the langgraph orchestrator drives fixtures/linkcheck on the container backend", () => {
  let root: string;
  let executor: DockerExecutor;
  const runIds: string[] = [];
  let n = 0;

  beforeAll(async () => {
    root = tempDir("lg");
    executor = await containerExecutor(path.join(root, "image"));
  });
  afterAll(async () => {
    expect(await leftovers(runIds)).toEqual([]);
    fs.rmSync(root, { recursive: true, force: true });
  });

  async function drive(orchestrator: OrchestratorName) {
    const stateDir = path.join(root, `state-${++n}`);
    const runs = service(stateDir, executor);
    const workspace = path.join(root, `ws-${n}`);
    const created = await runs.createRun({ workspace, fixtureDir: LINKCHECK, model: "replay", trustReplayFile: false, backend: "container", orchestrator });
    runIds.push(created.run_id);
    let view = await runs.settled(created.run_id);
    let approvals = 0;
    const checkpointsAtPause: number[] = [];
    while (view.status === "awaiting_approval" && approvals < 5) {
      if (orchestrator === "langgraph") checkpointsAtPause.push(countCheckpoints(stateDir, created.run_id));
      await runs.approve(created.run_id, view.pending_action!.action_id);
      approvals++;
      view = await runs.settled(created.run_id);
    }
    const events = await runs.events(created.run_id, 0, 0);
    const facts = {
      runs,
      stateDir,
      workspace,
      view,
      approvals,
      events,
      actions: runs.ledger.listActions(created.run_id),
      checkpointsAtPause,
    };
    await runs.shutdown();
    return facts;
  }

  it("completes with 2 writes, 2 receipts, 2 approvals, candidate tests 3/3, and names langgraph and its version in run_created", async () => {
    const lg = await drive("langgraph");
    expect(lg.view.status, lg.view.reason ?? "").toBe("completed");
    expect(lg.approvals).toBe(2);
    expect(lg.view.counters.writes).toBe(2);
    expect(lg.actions.map((a) => [a.status, a.receipt?.source])).toEqual([
      ["receipted", "write"],
      ["receipted", "write"],
    ]);
    expect(count(lg.events, "approval_requested")).toBe(2);
    expect(lg.events.filter((e) => e.type === "approval_recorded").map((e) => e.payload)).toEqual([
      { decision: "approved", by: "user" },
      { decision: "approved", by: "user" },
    ]);
    expect(count(lg.events, "action_written")).toBe(2);
    const passed = lg.events.find((e) => e.type === "verification_passed")!;
    expect(passed.payload).toMatchObject({ tests: { passed: 3, failed: 0 } });
    expect(lg.events.find((e) => e.type === "run_created")?.payload).toMatchObject({
      orchestrator: { name: "langgraph", package: "@langchain/langgraph", version: packageVersion("@langchain/langgraph") },
    });
    expect(packageVersion("@langchain/langgraph")).toMatch(/^1\.7\./);
    expect(fs.readFileSync(path.join(lg.workspace, "src/linkcheck.js"), "utf8")).toContain("path.dirname(docAbs)");
    // each pause is a checkpoint on disk; a run that ended leaves none (the checkpoint file does not grow with finished runs)
    expect(lg.checkpointsAtPause.every((c) => c > 0)).toBe(true);
    expect(countCheckpoints(lg.stateDir, lg.view.run_id)).toBe(0);
    const dir = path.dirname(checkpointFile(lg.stateDir));
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
    expect(fs.statSync(checkpointFile(lg.stateDir)).mode & 0o777).toBe(0o600);
  });

  it("ends as the manual loop does on the same replay: same status, writes, receipts, approvals and ordered event types", async () => {
    const manual = await drive("manual");
    const lg = await drive("langgraph");
    expect([lg.view.status, lg.view.counters.writes, lg.approvals]).toEqual([manual.view.status, manual.view.counters.writes, manual.approvals]);
    expect(lg.actions.map((a) => [a.record.path, a.status, a.receipt?.source])).toEqual(
      manual.actions.map((a) => [a.record.path, a.status, a.receipt?.source]),
    );
    expect(lg.view.counters).toMatchObject({ ...manual.view.counters, elapsed_ms: lg.view.counters.elapsed_ms });
    expect(types(lg.events)).toEqual(types(manual.events));
    expect(fs.readFileSync(path.join(lg.workspace, "src/linkcheck.js"), "utf8")).toBe(fs.readFileSync(path.join(manual.workspace, "src/linkcheck.js"), "utf8"));
  });

  it("a cancel while the graph is driving stops it promptly and the run ends cancelled, with nothing after its stop", async () => {
    const stateDir = path.join(root, `state-${++n}`);
    const runs = service(stateDir, executor);
    try {
      const created = await runs.createRun({
        workspace: path.join(root, `ws-${n}`),
        fixtureDir: LINKCHECK,
        model: "replay",
        trustReplayFile: false,
        backend: "container",
        orchestrator: "langgraph",
      });
      runIds.push(created.run_id);
      const first = expectStatus(await runs.settled(created.run_id), "awaiting_approval");
      await runs.approve(created.run_id, first.pending_action!.action_id);
      // approve only records the decision: the write, the next model turns and the next proposal are the graph's drive, now under way
      const cancelled = await runs.cancel(created.run_id);
      expect(cancelled.status).toBe("cancelled");
      const view = await runs.settled(created.run_id);
      expect(view.status).toBe("cancelled");
      const events = await runs.events(created.run_id, 0, 0);
      expect(events.filter((e) => e.type === "run_stopped")).toHaveLength(1);
      expect(events.at(-1)?.type).toBe("run_stopped");
      // the approved write is never cut in half: it was carried out once or not at all
      expect(count(events, "action_written")).toBeLessThanOrEqual(1);
      expect(countCheckpoints(stateDir, created.run_id)).toBe(0);
    } finally {
      await runs.shutdown();
    }
  });

  it("a cancel while the Verifier runs returns after the Verifier's step has ended: one stop, no sandbox left (regression: the aborted graph call returned before its step, whose container outlived the cancel)", async () => {
    const stateDir = path.join(root, `state-${++n}`);
    const runs = service(stateDir, executor);
    try {
      const created = await runs.createRun({
        workspace: path.join(root, `ws-${n}`),
        fixtureDir: LINKCHECK,
        model: "replay",
        trustReplayFile: false,
        backend: "container",
        orchestrator: "langgraph",
      });
      const runId = created.run_id;
      runIds.push(runId);
      let view = expectStatus(await runs.settled(runId), "awaiting_approval");
      await runs.approve(runId, view.pending_action!.action_id);
      view = expectStatus(await runs.settled(runId), "awaiting_approval");
      const seq = (await runs.events(runId, 0, 0)).at(-1)!.seq;
      await runs.approve(runId, view.pending_action!.action_id);
      // the graph's verify node is running the candidate tests in a sandbox
      for (let since = seq; ; ) {
        const next = await runs.events(runId, since, 30_000);
        if (next.some((e) => e.type === "verification_started")) break;
        if (next.some((e) => e.type === "run_stopped")) throw new Error("the run stopped before the Verifier started");
        since = next.at(-1)?.seq ?? since;
      }
      expect((await runs.cancel(runId)).status).toBe("cancelled");
      // the drive is over when cancel returns: the Verifier's own step has ended and removed its sandbox
      expect(await leftovers([runId])).toEqual([]);
      const events = await runs.events(runId, 0, 0);
      expect(events.filter((e) => e.type === "run_stopped")).toHaveLength(1);
      expect(events.at(-1)?.type).toBe("run_stopped");
      expect(runs.getRun(runId).status).toBe("cancelled");
    } finally {
      await runs.shutdown();
    }
  });

  it("checkpoints of a run cancelled while awaiting approval (no drive to delete them) are swept by the next daemon's first drive", async () => {
    const stateDir = path.join(root, `state-${++n}`);
    let runs = service(stateDir, executor);
    const ids: string[] = [];
    for (const w of ["a", "b"]) {
      const created = await runs.createRun({
        workspace: path.join(root, `ws-${n}${w}`),
        fixtureDir: LINKCHECK,
        model: "replay",
        trustReplayFile: false,
        backend: "container",
        orchestrator: "langgraph",
      });
      runIds.push(created.run_id);
      ids.push(created.run_id);
      expectStatus(await runs.settled(created.run_id), "awaiting_approval");
    }
    await runs.cancel(ids[0]!);
    expect(countCheckpoints(stateDir, ids[0]!)).toBeGreaterThan(0);
    await runs.shutdown();

    runs = service(stateDir, executor);
    try {
      await runs.recoverAtStartup();
      const pending = runs.getRun(ids[1]!).pending_action!;
      await runs.approve(ids[1]!, pending.action_id);
      await runs.settled(ids[1]!);
      expect(countCheckpoints(stateDir, ids[0]!)).toBe(0);
      await runs.cancel(ids[1]!);
    } finally {
      await runs.shutdown();
    }
  });
});

function count(events: TraceEvent[], type: TraceEvent["type"]): number {
  return events.filter((e) => e.type === type).length;
}

function types(events: TraceEvent[]): string[] {
  return events.map((e) => e.type);
}

function countCheckpoints(stateDir: string, runId: string): number {
  const file = checkpointFile(stateDir);
  if (!fs.existsSync(file)) return 0;
  // a second connection, as another process would read it
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare("SELECT COUNT(*) AS n FROM checkpoints WHERE thread_id = ?").get(runId) as { n: number }).n;
  } finally {
    db.close();
  }
}
