import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DockerExecutor } from "../../daemon/src/sandbox/docker-executor.js";
import { defaultToolPort } from "../../daemon/src/runtime/tools-port.js";
import type { ToolPort } from "../../daemon/src/runtime/ports.js";
import { containerExecutor, expectStatus, leftovers, LINKCHECK, service, tempDir } from "../runtime/harness.js";

process.env.TESTCONTAINERS_RYUK_DISABLED = "true";

describe("daemon shutdown and restart", () => {
  let root: string;
  let executor: DockerExecutor;
  const runIds: string[] = [];

  beforeAll(async () => {
    root = tempDir("shutdown");
    executor = await containerExecutor(path.join(root, "image"));
  });
  afterAll(async () => {
    expect(await leftovers(runIds)).toEqual([]);
    fs.rmSync(root, { recursive: true, force: true });
  });

  it("a shutdown during run_tests leaves the run interrupted (not cancelled); the next service resumes it and runs the unanswered call again", async () => {
    const stateDir = path.join(root, "state");
    const real = defaultToolPort();
    let entered!: () => void;
    const inTests = new Promise<void>((r) => (entered = r));
    // run_tests that only ends when the run's signal fires, like a long test suite during SIGTERM
    const slowRun: ToolPort["run"] = (call, ctx) =>
      call.name !== "run_tests"
        ? real.run(call, ctx)
        : new Promise((resolve) => {
            entered();
            ctx.signal.addEventListener(
              "abort",
              () => resolve({ call_id: call.call.call_id, ok: false, data: null, error: { code: "cancelled", message: "stopped" }, truncated: false }),
              { once: true },
            );
          });
    const first = service(stateDir, executor, { tools: { run: slowRun } });
    const created = await first.createRun({
      workspace: path.join(root, "ws"),
      fixtureDir: LINKCHECK,
      model: "replay",
      trustReplayFile: false,
      backend: "container",
    });
    runIds.push(created.run_id);
    const pending = expectStatus(await first.settled(created.run_id), "awaiting_approval").pending_action!;
    await first.approve(created.run_id, pending.action_id);
    await inTests;
    await first.shutdown();

    const second = service(stateDir, executor);
    await second.recoverAtStartup();
    const stopped = second.getRun(created.run_id);
    expect(stopped.status).toBe("interrupted");
    await second.resume(created.run_id);
    const next = expectStatus(await second.settled(created.run_id), "awaiting_approval");
    expect(next.pending_action?.path).toBe("src/linkcheck.js");
    // the re-run call was answered by the real sandbox this time: red, as the replay expects
    expect(next.tests).toMatchObject({ discovered: 3, failed: 1 });
    const observed = (await second.events(created.run_id, 0, 0)).filter((e) => e.type === "tool_observed" && e.call_id === "call_03_red");
    expect(observed.map((e) => e.payload.error)).toEqual(["tests_failed"]);
    await second.cancel(created.run_id);
    await second.shutdown();
  });
});
