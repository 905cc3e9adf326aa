import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TaskSpec } from "../../daemon/src/contracts/task-spec.js";
import { LocalExecutor } from "../../daemon/src/sandbox/local-executor.js";
import { verify } from "../../daemon/src/verifier/verify.js";
import { BUG, CONTROL, editedWorkspace, FIX, loadLinkcheck } from "./linkcheck-fixture.js";

/**
 * The built-in replay may run on the trusted_local backend (host processes);
 * the Verifier must reach the same verdicts there, with /control mapped to the
 * copied acceptance assets. Real files and real node processes, no engine needed.
 */
let tmp: string;
let task: TaskSpec;
let agentTest: string;

beforeAll(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), "verify-local-"));
  ({ task, agentTest } = await loadLinkcheck());
});
afterAll(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

async function check(name: string, edit: (s: string) => string) {
  const { ws, baseline } = await editedWorkspace(tmp, name, agentTest, edit);
  return verify({ runId: `local-${name}`, task, workspaceRoot: ws, baseline, acceptanceDir: CONTROL, executor: new LocalExecutor() });
}

describe("verify on the trusted_local backend", () => {
  it("the fix passes with 3 tests and every hidden case", async () => {
    const ev = await check("fixed", (s) => s.replace(BUG, FIX));
    expect(ev).toMatchObject({ passed: true, reason: null, tests: { discovered: 3, passed: 3 } });
    expect(ev.acceptance?.failed).toEqual([]);
  });

  it("the always-empty checker is green on the tests and caught by nested_missing", async () => {
    const ev = await check("always-empty", (s) => s.replace("  return broken;", "  return [];"));
    expect(ev.tests).toMatchObject({ discovered: 3, passed: 3, failed: 0 });
    expect(ev).toMatchObject({ passed: false, reason: "verification_failed" });
    expect(ev.acceptance?.failed).toContain("nested_missing");
  });
});
