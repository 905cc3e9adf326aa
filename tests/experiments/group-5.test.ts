import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setUpEngine } from "../../experiments/src/engine.js";
import { finalOutputScenario, reentryScenario } from "../../experiments/src/group-5.js";
import { runGroup, scratchDirIn } from "../../experiments/src/runner.js";

/**
 * Group 5 of the offline report against the real engine: the kill-at-the-approval
 * and final-output machinery itself, exercised under the manual orchestrator so it
 * is tested whatever the framework adapters do. The report's shape and the manual
 * scenario as an operator runs it are checked on the full reports of
 * offline-report.test.ts, which already runs group 5.
 */
const ROOT = path.resolve(import.meta.dirname, "../..");
let tmp: string;

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "experiments-group5-"));
});
afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe("group 5 of the offline report", () => {
  it("the re-entry scenario's real SIGKILL at the approval pause and its final_output scenario hold under the manual orchestrator", {
    timeout: 1_200_000,
  }, async () => {
    const engine = await setUpEngine(path.join(tmp, "engine"), process.env, "runc", process.env.MINI_AGENT_TEST_IMAGE_LOCK ?? null);
    expect(engine.facts.available).toBe(true);
    const errors: string[] = [];
    const out = await runGroup(
      { id: "group-5", title: "machinery", scenarios: [reentryScenario("manual"), finalOutputScenario("manual")] },
      {
        repoRoot: ROOT,
        executor: engine.executor,
        familyExecutor: engine.familyExecutor,
        engine: engine.facts,
        imageLockPath: engine.lockPath,
        dockerEnv: process.env.DOCKER_HOST ? { DOCKER_HOST: process.env.DOCKER_HOST } : {},
        nodeExecPath: process.execPath,
      },
      { now: () => 0, scratchDir: scratchDirIn(path.join(tmp, "s")), onError: (where, err) => errors.push(`${where}: ${String(err)}`) },
    );
    expect(errors).toEqual([]);
    expect(out.scenarios[0]!.observed).toEqual({
      child: "killed:awaiting_approval",
      status_after_kill: "awaiting_approval",
      intents_for_action: 1,
      writes_for_action: 1,
      receipts_for_action: 1,
      file_matches_after_hash: true,
      writes: 2,
      status: "completed",
    });
    expect(out.scenarios[1]!.observed).toEqual({
      orchestrator: "manual",
      status: "failed",
      writes: 0,
      verification_started: 1,
      verification_passed: 0,
      verification_failed: 1,
      reason_is_verifiers: true,
    });
    expect(out.passed).toBe(true);
  });
});
