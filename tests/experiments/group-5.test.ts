import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setUpEngine } from "../../daemon/src/experiments/engine.js";
import { finalOutputScenario, reentryScenario } from "../../daemon/src/experiments/group-5.js";
import { runGroup, scratchDirIn } from "../../daemon/src/experiments/runner.js";

/**
 * Group 5 of the offline report against the real engine: the report's shape and
 * the manual scenario as an operator runs it (`--group 5`, twice), and the
 * kill-at-the-approval and final-output machinery itself, exercised under the
 * manual orchestrator so it is tested whatever the framework adapters do.
 */
const ROOT = path.resolve(import.meta.dirname, "../..");
let tmp: string;

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "experiments-group5-"));
});
afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

function report(args: string[]) {
  const r = spawnSync(process.execPath, ["--import", "tsx", "scripts/experiments.ts", ...args], { cwd: ROOT, encoding: "utf8", timeout: 1_500_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

type Scenario = { id: string; passed: boolean; expected: Record<string, unknown>; observed: Record<string, unknown> };
const IDS = [
  "canonical_replay_manual",
  "canonical_replay_langgraph",
  "canonical_replay_agents_sdk",
  "langgraph_reentry_one_write",
  "agents_sdk_final_output_not_completion",
];

describe("npm run experiments -- --group 5", () => {
  it("writes group-5.json with one scenario per orchestrator plus re-entry and final_output; manual completes; two runs give the same canonical bytes", {
    timeout: 3_000_000,
  }, () => {
    const a = report(["--group", "5", "--output", path.join(tmp, "a")]);
    // a scenario that cannot run (an orchestrator that does not load) is a failed scenario, never a crashed report
    expect([0, 1]).toContain(a.code);
    expect(a.stderr).not.toMatch(/\n\s+at /);
    const g5 = JSON.parse(fs.readFileSync(path.join(tmp, "a", "group-5.json"), "utf8"));
    expect(g5.group).toBe("group-5");
    const scenarios: Scenario[] = g5.scenarios;
    expect(scenarios.map((s) => s.id)).toEqual(IDS);
    for (const s of scenarios) {
      expect(Object.keys(s).sort()).toEqual(["criterion", "does_not_prove", "expected", "id", "observed", "passed", "title"]);
      expect(typeof s.observed).toBe("object");
    }
    const manual = scenarios[0]!;
    expect(manual.passed).toBe(true);
    expect(manual.observed).toMatchObject({
      status: "completed",
      writes: 2,
      receipts: 2,
      candidate_tests: { discovered: 3, passed: 3, failed: 0 },
      approvals: { asked: 2, given: 2 },
      orchestrator: { name: "manual", package: "mini-agent" },
    });
    // the frameworks' installed versions are what the report expects them to record
    expect(scenarios[1]!.expected.orchestrator).toEqual({ name: "langgraph", package: "@langchain/langgraph", version: "1.7.3" });
    expect(scenarios[2]!.expected.orchestrator).toEqual({ name: "agents-sdk", package: "@openai/agents", version: "0.20.0" });
    expect(a.code).toBe(scenarios.every((s) => s.passed) ? 0 : 1);

    const b = report(["--group", "5", "--output", path.join(tmp, "b")]);
    expect(b.code).toBe(a.code);
    expect(fs.readFileSync(path.join(tmp, "b", "offline-canonical.json"), "utf8")).toBe(fs.readFileSync(path.join(tmp, "a", "offline-canonical.json"), "utf8"));
  });

  it("the re-entry scenario's real SIGKILL at the approval pause and its final_output scenario hold under the manual orchestrator", {
    timeout: 1_200_000,
  }, async () => {
    const engine = await setUpEngine(path.join(tmp, "engine"), process.env, "runc");
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
