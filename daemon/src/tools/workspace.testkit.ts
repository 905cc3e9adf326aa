import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { TaskSpec } from "../contracts/task-spec.js";
import type { ToolContext } from "./context.js";

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
export const FIXTURES = path.join(REPO_ROOT, "fixtures");

export interface TempRun {
  tmp: string;
  ws: string;
  ctl: string;
  ctx: ToolContext;
  cleanup(): Promise<void>;
}

export const SMALL_TASK = {
  schema_version: 1,
  name: "t",
  task: "test task",
  writable: ["src/**", "tests/test_agent_*.js"],
  creatable: ["tests/test_agent_*.js"],
  test_presets: { candidate: { command: ["node", "--test", "--test-reporter=tap"], files: ["tests/*.js"] } },
  verify_preset: "candidate",
} as const;

/** A fresh workspace (files written as given) and a control dir beside it, never inside. */
export async function tempRun(files: Record<string, string | Buffer>, task: unknown = SMALL_TASK): Promise<TempRun> {
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), "mini-agent-tools-"));
  const ws = path.join(tmp, "ws");
  const ctl = path.join(tmp, "control");
  await fs.mkdir(ws);
  for (const [rel, content] of Object.entries(files)) {
    const abs = path.join(ws, rel);
    await fs.mkdir(path.dirname(abs), { recursive: true });
    await fs.writeFile(abs, content);
  }
  const ctx: ToolContext = { task: TaskSpec.parse(task), workspaceRoot: ws, controlDir: ctl };
  return { tmp, ws, ctl, ctx, cleanup: () => fs.rm(tmp, { recursive: true, force: true }) };
}

/** A fixture's repo/ copied into a fresh workspace, with its task.json. */
export async function fixtureRun(name: string): Promise<TempRun & { fixtureDir: string }> {
  const fixtureDir = path.join(FIXTURES, name);
  const task = JSON.parse(await fs.readFile(path.join(fixtureDir, "task.json"), "utf8"));
  const run = await tempRun({}, task);
  await fs.cp(path.join(fixtureDir, "repo"), run.ws, { recursive: true });
  return { ...run, fixtureDir };
}
