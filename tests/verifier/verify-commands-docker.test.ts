import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TaskSpec } from "../../daemon/src/contracts/task-spec.js";
import type { DockerExecutor } from "../../daemon/src/sandbox/docker-executor.js";
import { verify } from "../../daemon/src/verifier/verify.js";
import { computeManifest } from "../../daemon/src/workspace/manifest.js";
import { containerExecutor, leftovers } from "../runtime/harness.js";

/**
 * The extra verify commands (issue 12) on the real container sandbox: each one
 * in its OWN fresh container, exactly like the verify preset (what one command
 * leaves in /workspace the next never sees, and nothing comes back to the
 * host), each result in the evidence, a red one failing the run by name.
 */
const LONG = 240_000;
const TEST = 'import test from "node:test";\ntest("ok", () => {});\n';

function task(): TaskSpec {
  return TaskSpec.parse({
    schema_version: 1,
    name: "syntax",
    task: "keep it parsing",
    writable: ["src/**"],
    test_presets: { unit: { command: ["node", "--test"], files: ["tests/*.test.mjs"] } },
    verify_preset: "unit",
    verify_commands: [
      { name: "check_good", command: ["node", "--check", "src/good.mjs"] },
      { name: "check_broken", command: ["node", "--check", "src/broken.mjs"] },
      { name: "leave_marker", command: ["node", "-e", "require('fs').writeFileSync('/workspace/src/marker.txt', 'x')"] },
      { name: "fresh_sandbox", command: ["node", "-e", "process.exit(require('fs').existsSync('/workspace/src/marker.txt') ? 1 : 0)"] },
    ],
  });
}

let tmp: string;
let executor: DockerExecutor;
const runIds: string[] = [];

beforeAll(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), "verify-commands-docker-"));
  executor = await containerExecutor(path.join(tmp, "state"));
}, LONG);

afterAll(async () => {
  expect(await leftovers(runIds)).toEqual([]);
  await fs.rm(tmp, { recursive: true, force: true });
});

describe("extra verify commands in fresh containers", () => {
  it("node --check on a file with a syntax error fails the run as verify_command_failed; the clean file and a fresh sandbox pass", {
    timeout: LONG,
  }, async () => {
    const ws = path.join(tmp, "ws");
    await fs.mkdir(path.join(ws, "src"), { recursive: true });
    await fs.mkdir(path.join(ws, "tests"));
    await fs.writeFile(path.join(ws, "src", "good.mjs"), "export const a = 1;\n");
    await fs.writeFile(path.join(ws, "src", "broken.mjs"), "export const b = 1;\n");
    await fs.writeFile(path.join(ws, "tests", "a.test.mjs"), TEST);
    const baseline = await computeManifest(ws);
    await fs.writeFile(path.join(ws, "src", "broken.mjs"), "export const b = ;\n");
    const runId = "verify-commands-docker-1";
    runIds.push(runId);

    const ev = await verify({ runId, task: task(), workspaceRoot: ws, baseline, acceptanceDir: null, executor });

    expect(ev).toMatchObject({ passed: false, reason: "verify_command_failed", tests: { discovered: 1, passed: 1, exit_code: 0 } });
    expect(
      ev.verify_commands?.map((c) => ({ name: c.name, exit_code: c.exit_code, passed: c.passed, truncated: c.truncated, timed_out: c.timed_out })),
    ).toEqual([
      { name: "task:check_good", exit_code: 0, passed: true, truncated: false, timed_out: false },
      { name: "task:check_broken", exit_code: 1, passed: false, truncated: false, timed_out: false },
      { name: "task:leave_marker", exit_code: 0, passed: true, truncated: false, timed_out: false },
      { name: "task:fresh_sandbox", exit_code: 0, passed: true, truncated: false, timed_out: false },
    ]);
    expect(ev.details).toContainEqual(expect.stringMatching(/^verify command\(s\) failed: task:check_broken \(/));
    // nothing a verify command wrote comes back to the workspace
    await expect(fs.stat(path.join(ws, "src", "marker.txt"))).rejects.toMatchObject({ code: "ENOENT" });
  });
});
