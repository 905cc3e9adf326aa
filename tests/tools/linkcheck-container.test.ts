import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DockerExecutor } from "../../daemon/src/sandbox/docker-executor.js";
import { captureBaseline } from "../../daemon/src/workspace/baseline.js";
import { driveReplay } from "../../daemon/src/tools/replay-driver.testkit.js";
import { fixtureRun, type TempRun } from "../../daemon/src/tools/workspace.testkit.js";
import { workspaceDiff } from "../../daemon/src/tools/show-diff.js";
import { decideCases, parseAcceptanceOutput } from "../../daemon/src/verifier/acceptance-protocol.js";
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

/** the hidden cases decided as the Verifier decides them: the protocol, then the task's expected answers */
function decide(run: TempRun, stdout: string) {
  const spec = run.ctx.task.acceptance!;
  const parsed = parseAcceptanceOutput(stdout, spec.cases);
  if (!parsed.ok) throw new Error(parsed.error);
  return decideCases(parsed.cases, spec.expected);
}

describe("linkcheck through the container sandbox", () => {
  it("canonical replay: red 3/2/1, green 3/3 in the sandbox, hidden acceptance all passed", async () => {
    const { run, steps, acceptance } = await replayInContainer("replay.json", "tools-canonical");
    const tests = steps.filter((s) => s.name === "run_tests");
    expect(tests.map(counts)).toEqual([
      [3, 2, 1],
      [3, 3, 0],
    ]);
    expect(tests[0]?.result).toMatchObject({ ok: false, error: { code: "tests_failed" } });
    expect(tests[1]?.result).toMatchObject({ ok: true });
    expect(steps.filter((s) => s.wrote).length).toBe(2);
    expect((await workspaceDiff(run.ctx)).files.map((f) => f.path)).toEqual(["src/linkcheck.js", "tests/test_agent_nested.js"]);
    expect(acceptance.exit_code).toBe(0);
    expect(decide(run, acceptance.stdout)).toEqual({ passed: [...run.ctx.task.acceptance!.cases].sort(), failed: [], claimed_but_wrong: [] });
  });

  it("always-empty replay: green candidate tests in the sandbox, hidden nested_missing (and root_missing) fail", async () => {
    const { run, steps, acceptance } = await replayInContainer("replays/always-empty.json", "tools-always-empty");
    expect(steps.filter((s) => s.name === "run_tests").map(counts)).toEqual([
      [3, 2, 1],
      [3, 3, 0],
    ]);
    // every case ran and answered; the host's expected answers fail two of them
    expect(acceptance.exit_code).toBe(0);
    expect(decide(run, acceptance.stdout).failed).toEqual(["nested_missing", "root_missing"]);
  });
});
