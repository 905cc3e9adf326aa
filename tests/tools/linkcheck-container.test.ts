import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DockerExecutor } from "../../daemon/src/sandbox/docker-executor.js";
import { captureBaseline } from "../../daemon/src/workspace/baseline.js";
import { driveReplay } from "../../daemon/src/tools/replay-driver.testkit.js";
import { fixtureRun, type TempRun } from "../../daemon/src/tools/workspace.testkit.js";
import { workspaceDiff } from "../../daemon/src/tools/show-diff.js";
import { containerExecutor, leftovers } from "../runtime/harness.js";

/**
 * The linkcheck replays with run_tests going through the REAL container
 * sandbox (warm session per run) and the hidden acceptance in a fresh
 * container with the control dir at /control.
 */
let tmp: string;
let executor: DockerExecutor;
const runIds: string[] = [];
const runs: TempRun[] = [];

beforeAll(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), "mini-agent-tools-docker-"));
  executor = await containerExecutor(path.join(tmp, "state"));
});

afterAll(async () => {
  for (const r of runs) await r.cleanup();
  await fs.rm(tmp, { recursive: true, force: true });
  expect(await leftovers(runIds)).toEqual([]);
});

async function replayInContainer(replay: string, runId: string) {
  runIds.push(runId);
  const run = await fixtureRun("linkcheck");
  runs.push(run);
  await captureBaseline(run.ws, run.ctl);
  const session = await executor.openSession(runId);
  try {
    const steps = await driveReplay(path.join(run.fixtureDir, replay), run.ctx, session, runId);
    const acceptance = await executor.run({
      runId,
      purpose: "acceptance",
      argv: run.ctx.task.acceptance!.command,
      workspaceDir: run.ws,
      controlDir: path.join(run.fixtureDir, "control"),
      timeoutMs: 60_000,
    });
    return { run, steps, acceptance };
  } finally {
    await session.close();
  }
}

const counts = (s: { result?: { data: unknown } }) => {
  const d = s.result?.data as { discovered: number; passed: number; failed: number };
  return [d.discovered, d.passed, d.failed];
};

describe("linkcheck through the container sandbox", () => {
  it("canonical replay: red 3/2/1, green 3/3 in the sandbox, hidden acceptance all passed", async () => {
    const { run, steps, acceptance } = await replayInContainer("replay.json", "tools-canonical");
    const tests = steps.filter((s) => s.name === "run_tests");
    expect(tests.map(counts)).toEqual([[3, 2, 1], [3, 3, 0]]);
    expect(tests[0]?.result).toMatchObject({ ok: false, error: { code: "tests_failed" } });
    expect(tests[1]?.result).toMatchObject({ ok: true });
    expect(steps.filter((s) => s.wrote).length).toBe(2);
    expect((await workspaceDiff(run.ctx)).files.map((f) => f.path)).toEqual(["src/linkcheck.js", "tests/test_agent_nested.js"]);
    expect(acceptance.exit_code).toBe(0);
    const doc = JSON.parse(acceptance.stdout) as { cases: Array<{ id: string; passed: boolean }> };
    expect(doc.cases.every((c) => c.passed)).toBe(true);
    expect(doc.cases.map((c) => c.id).sort()).toEqual([...run.ctx.task.acceptance!.cases].sort());
  });

  it("always-empty replay: green candidate tests in the sandbox, hidden nested_missing fails", async () => {
    const { steps, acceptance } = await replayInContainer("replays/always-empty.json", "tools-always-empty");
    expect(steps.filter((s) => s.name === "run_tests").map(counts)).toEqual([[3, 2, 1], [3, 3, 0]]);
    expect(acceptance.exit_code).toBe(1);
    const doc = JSON.parse(acceptance.stdout) as { cases: Array<{ id: string; passed: boolean }> };
    expect(doc.cases.find((c) => c.id === "nested_missing")?.passed).toBe(false);
  });
});
