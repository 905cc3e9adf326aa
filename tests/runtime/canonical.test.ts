import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DockerExecutor } from "../../daemon/src/sandbox/docker-executor.js";
import { containerExecutor, expectStatus, leftovers, LINKCHECK, service, tempDir } from "./harness.js";

process.env.TESTCONTAINERS_RYUK_DISABLED = "true";

const actionIds = (jsonl: string): string[] => [...new Set(jsonl.match(/act_[0-9a-f]{32}/g) ?? [])];
/** each action id replaced by its order of first appearance */
const foldActionIds = (jsonl: string): string => actionIds(jsonl).reduce((s, id, i) => s.split(id).join(`<action-${i + 1}>`), jsonl);

describe("canonical linkcheck replay on the container backend", () => {
  let root: string;
  let stateDir: string;
  let executor: DockerExecutor;
  const runIds: string[] = [];
  let firstJsonl = "";

  beforeAll(async () => {
    root = tempDir("canonical");
    stateDir = path.join(root, "state");
    executor = await containerExecutor(stateDir);
  });
  afterAll(async () => {
    expect(await leftovers(runIds)).toEqual([]);
    fs.rmSync(root, { recursive: true, force: true });
  });

  it("reaches verifying then completed with exactly 2 approved writes, 2 receipts and the trace in the issue's order", async () => {
    const runs = service(stateDir, executor);
    const workspace = path.join(root, "ws");
    const notesBefore = fs.readFileSync(path.join(LINKCHECK, "repo", "notes.txt"));
    const created = await runs.createRun({ workspace, fixtureDir: LINKCHECK, model: "replay", trustReplayFile: false, backend: "container" });
    runIds.push(created.run_id);

    const first = expectStatus(await runs.settled(created.run_id), "awaiting_approval");
    expect(first.pending_action?.path).toBe("tests/test_agent_nested.js");
    expect(first.pending_action?.diff).toContain("+++ b/tests/test_agent_nested.js");
    // state is persisted before the prompt: the file does not exist yet
    expect(fs.existsSync(path.join(workspace, "tests/test_agent_nested.js"))).toBe(false);

    await runs.approve(created.run_id, first.pending_action!.action_id);
    const second = expectStatus(await runs.settled(created.run_id), "awaiting_approval");
    expect(second.pending_action?.path).toBe("src/linkcheck.js");
    expect(second.tests).toMatchObject({ failed: 1 });

    await runs.approve(created.run_id, second.pending_action!.action_id);
    const done = await runs.settled(created.run_id);
    expect(done.status, done.reason ?? "").toBe("completed");
    expect(done.counters.writes).toBe(2);
    expect(done.tests).toEqual({ discovered: 3, passed: 3, failed: 0, green: true });
    expect(done.verification?.passed).toBe(true);
    // regression: cancelling a completed run answered run_not_resumable
    await expect(runs.cancel(created.run_id)).rejects.toMatchObject({ code: "run_already_finished", message: expect.stringContaining("nothing to cancel") });

    const actions = runs.ledger.listActions(created.run_id);
    expect(actions.map((a) => [a.record.path, a.status, a.receipt?.source])).toEqual([
      ["tests/test_agent_nested.js", "receipted", "write"],
      ["src/linkcheck.js", "receipted", "write"],
    ]);
    expect(fs.readFileSync(path.join(workspace, "notes.txt"))).toEqual(notesBefore);

    const events = await runs.events(created.run_id, 0, 0);
    const seqs = events.map((e) => e.seq);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    const order = events.map((e) => e.type).filter((t) => t !== "model_requested" && t !== "tool_observed");
    expect(order).toEqual([
      "run_created",
      "project_context",
      "plan_recorded",
      "tool_proposed", // read_file
      "tool_proposed", // apply_patch (new test)
      "approval_requested",
      "approval_recorded",
      "action_intent",
      "action_written",
      "action_receipt",
      "tool_proposed", // run_tests: red
      "tool_proposed", // apply_patch (fix)
      "approval_requested",
      "approval_recorded",
      "action_intent",
      "action_written",
      "action_receipt",
      "tool_proposed", // run_tests: green
      "verification_started",
      "verification_passed",
      "run_stopped",
    ]);
    const observedTests = events.filter((e) => e.type === "tool_observed" && e.payload.tool === "run_tests").map((e) => [e.payload.ok, e.payload.passed]);
    expect(observedTests).toEqual([
      [false, 2],
      [true, 3],
    ]);

    const jsonl = runs.traceJsonl(created.run_id);
    firstJsonl = jsonl;
    expect(jsonl).not.toContain(root);
    expect(jsonl).not.toMatch(/"(at|duration_ms|elapsed_ms)":/);
    expect(jsonl.trim().split("\n")).toHaveLength(events.length);
    await runs.shutdown();
  });

  it("gives a byte-identical canonical trace, but for its own action ids, for a second run in another state dir and workspace", async () => {
    expect(firstJsonl).not.toBe("");
    const other = path.join(root, "other");
    const runs = service(path.join(other, "state"), executor);
    const created = await runs.createRun({
      workspace: path.join(other, "elsewhere", "ws"),
      fixtureDir: LINKCHECK,
      model: "replay",
      trustReplayFile: false,
      backend: "container",
    });
    runIds.push(created.run_id);
    for (let v = await runs.settled(created.run_id); v.status === "awaiting_approval"; v = await runs.settled(created.run_id)) {
      await runs.approve(created.run_id, v.pending_action!.action_id);
    }
    expect(runs.getRun(created.run_id).status).toBe("completed");
    // action ids name their run (issue 10 item 4): the one difference two runs of a replay may show
    const second = runs.traceJsonl(created.run_id);
    expect(actionIds(second)).toHaveLength(2);
    expect(actionIds(second).some((id) => actionIds(firstJsonl).includes(id))).toBe(false);
    expect(foldActionIds(second)).toBe(foldActionIds(firstJsonl));
    await runs.shutdown();
  });

  it("long-polls events: a waiting reader is woken by the next append", async () => {
    const runs = service(path.join(root, "poll-state"), executor);
    const created = await runs.createRun({
      workspace: path.join(root, "poll-ws"),
      fixtureDir: LINKCHECK,
      model: "replay",
      trustReplayFile: false,
      backend: "container",
    });
    runIds.push(created.run_id);
    const view = await runs.settled(created.run_id);
    const waiting = runs.events(created.run_id, view.last_seq, 60_000);
    await runs.approve(created.run_id, view.pending_action!.action_id);
    const got = await waiting;
    expect(got[0]).toMatchObject({ seq: view.last_seq + 1, type: "approval_recorded" });
    await runs.settled(created.run_id);
    await runs.cancel(created.run_id);
    await runs.shutdown();
  });

  it("traces history_compaction when a tight view budget leaves groups out, and the run goes on", async () => {
    const { defaultViewBuilder } = await import("../../daemon/src/runtime/view-input.js");
    const runs = service(path.join(root, "tight-state"), executor, { viewBuilder: defaultViewBuilder(1800) });
    const created = await runs.createRun({
      workspace: path.join(root, "tight-ws"),
      fixtureDir: LINKCHECK,
      model: "replay",
      trustReplayFile: false,
      backend: "container",
    });
    runIds.push(created.run_id);
    let v = await runs.settled(created.run_id);
    await runs.approve(created.run_id, v.pending_action!.action_id);
    v = expectStatus(await runs.settled(created.run_id), "awaiting_approval");
    const compactions = (await runs.events(created.run_id, 0, 0)).filter((e) => e.type === "history_compaction");
    expect(compactions.length).toBeGreaterThan(0);
    expect(compactions[0]!.payload).toHaveProperty("dropped_groups");
    await runs.cancel(created.run_id);
    await runs.shutdown();
  });
});
