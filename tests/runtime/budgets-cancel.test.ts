import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadReplayFile, ReplayModel } from "../../daemon/src/models/replay.js";
import type { Model } from "../../daemon/src/models/model.js";
import { MiniAgentError } from "../../daemon/src/errors.js";
import type { DockerExecutor } from "../../daemon/src/sandbox/docker-executor.js";
import { defaultToolPort } from "../../daemon/src/runtime/tools-port.js";
import type { RunServiceImpl } from "../../daemon/src/runtime/service-impl.js";
import { containerExecutor, expectStatus, leftovers, LINKCHECK, service, tempDir } from "./harness.js";

process.env.TESTCONTAINERS_RYUK_DISABLED = "true";

describe("budgets, stop reasons, cancel and model retries", () => {
  let root: string;
  let executor: DockerExecutor;
  const runIds: string[] = [];
  const services: RunServiceImpl[] = [];
  let n = 0;

  beforeAll(async () => {
    root = tempDir("budgets");
    executor = await containerExecutor(path.join(root, "image"));
  });
  afterAll(async () => {
    for (const s of services) await s.shutdown();
    expect(await leftovers(runIds)).toEqual([]);
    fs.rmSync(root, { recursive: true, force: true });
  });

  /** A fake clock advanced only by the test, plus a hook that spends time inside each model turn. */
  function timed(stepMs: number) {
    const clock = {
      t: 1_000_000,
      now() {
        return this.t;
      },
    };
    const real = defaultToolPort().workspaceDigest;
    const tools = {
      workspaceDigest: async (ctx: Parameters<typeof real>[0]) => {
        clock.t += stepMs;
        return real(ctx);
      },
    };
    return { clock, tools };
  }

  function make(extra: Parameters<typeof service>[2] = {}) {
    const runs = service(path.join(root, `state-${++n}`), executor, extra);
    services.push(runs);
    return runs;
  }

  const canonical = (budgets: Record<string, number> = {}, model: "replay" | "live" = "replay") => ({
    workspace: path.join(root, `ws-${++n}`),
    fixtureDir: LINKCHECK,
    model,
    trustReplayFile: false,
    backend: "container" as const,
    budgets,
  });

  it("stops with budget_exhausted:tool_calls before the call it cannot pay for, and resuming with more budget replays that very call", async () => {
    const runs = make();
    const r = await runs.createRun(canonical({ tool_calls: 1 }));
    runIds.push(r.run_id);
    const stopped = expectStatus(await runs.settled(r.run_id), "budget_exhausted");
    expect(stopped.reason).toBe("budget_exhausted:tool_calls");
    expect(stopped.counters.tool_calls).toBe(1);
    expect(runs.ledger.listActions(r.run_id)).toHaveLength(0);

    const resumed = expectStatus(await runs.resume(r.run_id, { tool_calls: 10 }).then(() => runs.settled(r.run_id)), "awaiting_approval");
    expect(resumed.pending_action?.path).toBe("tests/test_agent_nested.js");
    await runs.cancel(r.run_id);
  });

  it("stops with budget_exhausted:total_seconds once the injected clock passes the total, with no new side effect; resume without more time is refused", async () => {
    const { clock, tools } = timed(4_000);
    const runs = make({ clock, tools });
    const r = await runs.createRun(canonical({ total_seconds: 10, per_call_seconds: 5 }));
    runIds.push(r.run_id);
    const stopped = expectStatus(await runs.settled(r.run_id), "budget_exhausted");
    expect(stopped.reason).toBe("budget_exhausted:total_seconds");
    expect(stopped.counters.elapsed_ms).toBeGreaterThanOrEqual(10_000);
    expect(runs.ledger.listActions(r.run_id)).toHaveLength(0);
    await expect(runs.resume(r.run_id)).rejects.toMatchObject({ code: "budget_exhausted" });
    expect(runs.getRun(r.run_id).status).toBe("budget_exhausted");
    await runs.resume(r.run_id, { total_seconds: 600 });
    expectStatus(await runs.settled(r.run_id), "awaiting_approval");
    await runs.cancel(r.run_id);
  });

  it("stops with budget_exhausted:model_turns and names it", async () => {
    const runs = make();
    const r = await runs.createRun(canonical({ model_turns: 2 }));
    runIds.push(r.run_id);
    expect((await runs.settled(r.run_id)).reason).toBe("budget_exhausted:model_turns");
  });

  /** The canonical replay behind a model that first fails the way a flaky provider does. */
  function flaky(runs: () => RunServiceImpl, failures: number, transient: boolean) {
    let left = failures;
    const file = loadReplayFile(path.join(LINKCHECK, "replay.json"));
    return ({ runId }: { runId: string }): Model => {
      const replay = new ReplayModel(file, () => runs().ledger.getRun(runId).replay_cursor);
      return {
        name: "flaky",
        async decide(view, signal) {
          if (left > 0) {
            left -= 1;
            throw new MiniAgentError("model_error", "provider returned 503", { details: { transient } });
          }
          return replay.decide(view, signal);
        },
      };
    };
  }

  it("retries a transient model failure at most twice, one model_retry event each", async () => {
    let runs!: RunServiceImpl;
    runs = make({ modelFactory: flaky(() => runs, 2, true) });
    const r = await runs.createRun(canonical({}, "live"));
    runIds.push(r.run_id);
    expectStatus(await runs.settled(r.run_id), "awaiting_approval");
    const retries = (await runs.events(r.run_id, 0, 0)).filter((e) => e.type === "model_retry");
    expect(retries.map((e) => e.payload.attempt)).toEqual([1, 2]);
    await runs.cancel(r.run_id);
  });

  it("fails after the third transient failure, and never retries a non-transient one", async () => {
    let a!: RunServiceImpl;
    a = make({ modelFactory: flaky(() => a, 3, true) });
    const r1 = await a.createRun(canonical({}, "live"));
    runIds.push(r1.run_id);
    const f1 = expectStatus(await a.settled(r1.run_id), "failed");
    expect(f1.reason).toContain("model_error");
    expect((await a.events(r1.run_id, 0, 0)).filter((e) => e.type === "model_retry")).toHaveLength(2);

    let b!: RunServiceImpl;
    b = make({ modelFactory: flaky(() => b, 1, false) });
    const r2 = await b.createRun(canonical({}, "live"));
    runIds.push(r2.run_id);
    expectStatus(await b.settled(r2.run_id), "failed");
    expect((await b.events(r2.run_id, 0, 0)).filter((e) => e.type === "model_retry")).toHaveLength(0);
  });

  /** A model that never answers until the run's signal fires. */
  const hanging = (started: () => void): Model => ({
    name: "hanging",
    decide: (_view, signal) =>
      new Promise((_resolve, reject) => {
        started();
        signal.addEventListener("abort", () => reject(new MiniAgentError("cancelled", "aborted")), { once: true });
      }),
  });

  it("cancel during a model call stops the run as cancelled; when the deadline has also passed both facts are kept, cancelled primary", async () => {
    const clock = {
      t: 0,
      now() {
        return this.t;
      },
    };
    let started!: () => void;
    const waiting = new Promise<void>((res) => (started = res));
    const runs = make({ clock, modelFactory: () => hanging(started) });
    const r = await runs.createRun(canonical({ total_seconds: 60, per_call_seconds: 60 }, "live"));
    runIds.push(r.run_id);
    await waiting;
    clock.t += 120_000;
    const view = await runs.cancel(r.run_id);
    expect(view.status).toBe("cancelled");
    expect(view.reason).toBe("cancelled (deadline also passed)");
    const stopped = (await runs.events(r.run_id, 0, 0)).filter((e) => e.type === "run_stopped");
    expect(stopped).toHaveLength(1);
    expect(stopped[0]!.payload).toMatchObject({ status: "cancelled", cancelled: true, timed_out: true });
    await expect(runs.resume(r.run_id)).rejects.toMatchObject({ code: "run_not_resumable" });
    // cancelling it again answers with the view; a run that ended otherwise says there is nothing to cancel
    await expect(runs.cancel(r.run_id)).resolves.toMatchObject({ status: "cancelled" });
  });

  it("cancel while awaiting approval ends the run; the pending action can no longer be approved", async () => {
    const runs = make();
    const r = await runs.createRun(canonical());
    runIds.push(r.run_id);
    const pending = expectStatus(await runs.settled(r.run_id), "awaiting_approval").pending_action!;
    expect((await runs.cancel(r.run_id)).status).toBe("cancelled");
    expect((await runs.cancel(r.run_id)).status).toBe("cancelled");
    await expect(runs.approve(r.run_id, pending.action_id)).rejects.toMatchObject({ code: "approval_stale" });
    expect(fs.existsSync(path.join(runs.getRun(r.run_id).workspace, pending.path))).toBe(false);
  });
});
