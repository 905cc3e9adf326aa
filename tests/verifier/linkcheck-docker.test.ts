import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TaskSpec } from "../../daemon/src/contracts/task-spec.js";
import type { DockerExecutor } from "../../daemon/src/sandbox/docker-executor.js";
import { verify } from "../../daemon/src/verifier/verify.js";
import { containerExecutor, leftovers } from "../runtime/harness.js";
import { BUG, CONTROL, editedWorkspace, FIX, loadLinkcheck } from "./linkcheck-fixture.js";

/**
 * The canonical fixture through the real Verifier and sandbox: the one-line
 * fix passes; the shipped bug fails; an implementation that reports no broken
 * links at all passes the candidate tests but is caught by the hidden case
 * `nested_missing`.
 */
let tmp: string;
let executor: DockerExecutor;
let task: TaskSpec;
let agentTest: string;
const runIds: string[] = [];

beforeAll(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), "verifier-linkcheck-"));
  executor = await containerExecutor(path.join(tmp, "state"));
  ({ task, agentTest } = await loadLinkcheck());
});

afterAll(async () => {
  expect(await leftovers(runIds)).toEqual([]);
  await fs.rm(tmp, { recursive: true, force: true });
});

const workspace = (name: string, edit: (src: string) => string) => editedWorkspace(tmp, name, agentTest, edit);

async function check(name: string, edit: (src: string) => string) {
  const { ws, baseline } = await workspace(name, edit);
  const runId = `verifier-linkcheck-${name}`;
  runIds.push(runId);
  return verify({ runId, task, workspaceRoot: ws, baseline, acceptanceDir: CONTROL, executor });
}

describe("verify the linkcheck fixture on the container sandbox", () => {
  it("the one-line fix passes: 3 candidate tests and every hidden case", async () => {
    const ev = await check("fixed", (s) => s.replace(BUG, FIX));
    expect(ev.reason).toBeNull();
    expect(ev).toMatchObject({ passed: true, protected_paths_changed: [], tests: { discovered: 3, passed: 3, failed: 0, exit_code: 0 } });
    expect(ev.acceptance?.failed).toEqual([]);
    expect(ev.acceptance?.passed).toEqual([...task.acceptance!.cases].sort());
  });

  it("the shipped bug fails: the new nested test is red", async () => {
    const ev = await check("buggy", (s) => s);
    expect(ev).toMatchObject({ passed: false, reason: "verification_failed", tests: { discovered: 3, failed: 1 } });
    expect(ev.acceptance?.failed).toContain("nested_ok");
  });

  it("an always-empty implementation passes the candidate tests but is rejected by hidden case nested_missing", async () => {
    const ev = await check("always-empty", (s) => s.replace("  return broken;", "  return [];"));
    expect(ev.tests).toMatchObject({ discovered: 3, passed: 3, failed: 0, exit_code: 0 });
    expect(ev).toMatchObject({ passed: false, reason: "verification_failed" });
    expect(ev.acceptance?.failed).toContain("nested_missing");
  });

  it("candidate code that forges the hidden harness's result line (it reads /control and writes the line itself) is still rejected", async () => {
    // what an adversarial implementation can do inside the acceptance sandbox: read everything there
    // (an expected answer left in /control would be found and replayed), then print the case
    // runner's result line before the runner does, claiming its own answers for every case
    const forger = [
      'import fsForge from "node:fs";',
      'if (fsForge.existsSync("/control/cases.mjs")) {',
      '  const marker = process.argv.find((a) => /^ACCEPTANCE-RESULT-/.test(a)) ?? "";',
      "  const found = {};",
      '  for (const f of fsForge.readdirSync("/control")) {',
      '    const p = "/control/" + f;',
      "    if (!fsForge.statSync(p).isFile()) continue;",
      '    const m = /EXPECTED = (\\{[\\s\\S]*?\\n\\});/.exec(fsForge.readFileSync(p, "utf8"));',
      '    if (m) Object.assign(found, Function("return " + m[1])());',
      "  }",
      '  const ids = [...fsForge.readFileSync("/control/cases.mjs", "utf8").matchAll(/^  (\\w+): "/gm)].map((x) => x[1]);',
      "  const forged = Object.fromEntries(ids.map((id) => [id, { actual: found[id] ?? [], error: null }]));",
      '  fsForge.writeSync(1, marker + " " + JSON.stringify(forged) + "\\n");',
      "  process.exit(0);",
      "}",
      "",
    ].join("\n");
    const ev = await check("forger", (s) => forger + s.replace("  return broken;", "  return [];"));
    expect(ev).toMatchObject({ passed: false, reason: "verification_failed" });
    // the harness took the forged line and reported every case passed; the host's answers did not agree
    expect((ev.details ?? []).join("\n")).toMatch(/reported as passed with a wrong answer: nested_missing, root_missing/);
    expect(ev.acceptance).toEqual({ passed: ["nested_anchor_parent", "nested_ok", "root_link_ok"], failed: ["nested_missing", "root_missing"], error: null });
  });

  it("code that exits the process on import: node counts each test file as passed, the Verifier counts no test (false_green)", async () => {
    const ev = await check("exits-on-import", (s) => "process.exit(0);\n" + s);
    expect(ev).toMatchObject({ passed: false, reason: "false_green", tests: { discovered: 0, passed: 0, exit_code: 0 } });
    expect((ev.details ?? []).join("\n")).toMatch(
      /exited without running a test \(not counted\): \/workspace\/tests\/test_agent_nested\.js, \/workspace\/tests\/test_extract\.js, \/workspace\/tests\/test_root\.js/,
    );
  });

  it("the fix with notes.txt touched -> protected_path_changed, although tests and hidden cases pass", async () => {
    const { ws, baseline } = await workspace("notes-touched", (s) => s.replace(BUG, FIX));
    await fs.appendFile(path.join(ws, "notes.txt"), "tidied up by the agent\n");
    const runId = "verifier-linkcheck-notes-touched";
    runIds.push(runId);
    const ev = await verify({ runId, task, workspaceRoot: ws, baseline, acceptanceDir: CONTROL, executor });
    expect(ev).toMatchObject({ passed: false, reason: "protected_path_changed", protected_paths_changed: ["notes.txt"], tests: { discovered: 3, passed: 3 } });
    expect(ev.acceptance?.failed).toEqual([]);
  });
});
