import fs from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { LocalExecutor } from "../../daemon/src/sandbox/local-executor.js";
import { runTests } from "../../daemon/src/tools/run-tests.js";
import { tempRun, type TempRun } from "../../daemon/src/tools/workspace.testkit.js";
import { computeManifest } from "../../daemon/src/workspace/manifest.js";
import { verify } from "../../daemon/src/verifier/verify.js";

/**
 * run_tests (what the model is told) and the Verifier (what decides "done")
 * judge the SAME real node --test run, through real host processes. They used
 * to disagree on a skipped test: run_tests said green for 2 passed + 1 skipped.
 */
const HEAD = 'import test from "node:test";\nimport assert from "node:assert/strict";\n';
const PKG = JSON.stringify({ type: "module" });

let run: TempRun | undefined;
afterEach(async () => run?.cleanup());

async function bothJudge(body: string) {
  run = await tempRun({ "package.json": PKG, "tests/a.js": `${HEAD}${body}`, "src/x.js": "export const x = 1;\n" });
  // the run changed something: a task without acceptance that changed nothing fails as no_changes before its tests count
  const baseline = await computeManifest(run.ws);
  await fs.writeFile(path.join(run.ws, "src", "x.js"), "export const x = 2;\n");
  const tool = await runTests("c1", { preset: "candidate" }, { ...run.ctx, runner: new LocalExecutor(), runId: "run_v", timeoutMs: 120_000 });
  const ev = await verify({
    runId: "run_v",
    task: run.ctx.task,
    workspaceRoot: run.ws,
    baseline,
    acceptanceDir: null,
    executor: new LocalExecutor(),
  });
  return { tool, ev, data: tool.data as { green: boolean; verdict: string; discovered: number; passed: number; skipped: number } };
}

describe("run_tests and the Verifier agree on one verdict", () => {
  it("regression: 2 passed + 1 skipped is red for both (run_tests used to call it green while the Verifier failed it)", async () => {
    const { tool, ev, data } = await bothJudge(
      'test("a", () => {});\ntest("b", () => assert.ok(true));\ntest("c", { skip: true }, () => assert.fail("never runs"));\n',
    );
    expect(data).toMatchObject({ discovered: 3, passed: 2, skipped: 1, green: false });
    expect(tool).toMatchObject({ ok: false, error: { code: "tests_failed" } });
    expect(data.verdict).toMatch(/1 skipped/);
    expect(ev).toMatchObject({ passed: false, reason: "verification_failed", tests: { discovered: 3, passed: 2, failed: 0, exit_code: 0 } });
  });

  it("only skipped tests: red for both, a false green to the Verifier", async () => {
    const { tool, ev } = await bothJudge('test("a", { skip: "later" }, () => {});\ntest.todo("b");\n');
    expect(tool.ok).toBe(false);
    expect(ev).toMatchObject({ passed: false, reason: "false_green" });
  });

  it("3 passed: green for both", async () => {
    const { tool, ev } = await bothJudge('test("a", () => {});\ntest("b", () => {});\ntest("c", () => {});\n');
    expect(tool).toMatchObject({ ok: true, data: { green: true, discovered: 3, passed: 3 } });
    expect(ev).toMatchObject({ passed: true, reason: null });
  });
});
