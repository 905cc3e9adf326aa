import fs from "node:fs/promises";
import path from "node:path";
import { expect } from "vitest";
import { TaskSpec } from "../../daemon/src/contracts/task-spec.js";
import { computeManifest, type Manifest } from "../../daemon/src/workspace/manifest.js";

/** The linkcheck fixture as the Verifier tests use it: its task, the replay's agent test, and edited copies of its repo. */
export const FIXTURE = path.resolve(import.meta.dirname, "../../fixtures/linkcheck");
export const CONTROL = path.join(FIXTURE, "control");
export const BUG = "    const resolved = path.join(rootDir, file);";
export const FIX = "    const resolved = path.join(path.dirname(docAbs), file);";

/** the task spec and the test file the canonical replay creates */
export async function loadLinkcheck(): Promise<{ task: TaskSpec; agentTest: string }> {
  const task = TaskSpec.parse(JSON.parse(await fs.readFile(path.join(FIXTURE, "task.json"), "utf8")));
  const replay = JSON.parse(await fs.readFile(path.join(FIXTURE, "replay.json"), "utf8"));
  const agentTest = replay.decisions.find((d: { kind: string; call?: { name: string } }) => d.kind === "tool" && d.call?.name === "apply_patch").call.arguments
    .new;
  return { task, agentTest };
}

/**
 * A copy of the fixture's repo at tmp/name with its baseline taken, then
 * src/linkcheck.js edited (it must still hold the shipped bug) and the
 * replay's agent test added.
 */
export async function editedWorkspace(
  tmp: string,
  name: string,
  agentTest: string,
  edit: (src: string) => string,
): Promise<{ ws: string; baseline: Manifest }> {
  const ws = path.join(tmp, name);
  await fs.cp(path.join(FIXTURE, "repo"), ws, { recursive: true });
  const baseline = await computeManifest(ws);
  const srcPath = path.join(ws, "src", "linkcheck.js");
  const src = await fs.readFile(srcPath, "utf8");
  expect(src).toContain(BUG);
  await fs.writeFile(srcPath, edit(src));
  await fs.writeFile(path.join(ws, "tests", "test_agent_nested.js"), agentTest);
  return { ws, baseline };
}
