import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { TaskSpec } from "../contracts/task-spec.js";
import { prepareApplyPatch } from "../tools/apply-patch.js";
import { SMALL_TASK, tempRun, type TempRun } from "../tools/workspace.testkit.js";
import { sha256Hex } from "../workspace/hash.js";
import { workspaceDigest } from "../workspace/version.js";
import { loadOrCreateApprovalKey } from "./approval-key.js";
import { bindingFor, checkApproval, signApproval } from "./approvals.js";
import { classify } from "./classify.js";

const task = TaskSpec.parse({ ...SMALL_TASK, forbidden: ["private/**"] });

describe("classify: deny > ask > allow", () => {
  it.each([
    ["read_file", { path: "src/a.js" }, "allow", null],
    ["search", { query: "x" }, "allow", null],
    ["search", { query: "x", path: ".git" }, "deny", "path_denied"],
    ["search", { query: "x", path: "." }, "allow", null],
    ["search", { query: "x", path: "./.." }, "deny", "path_denied"],
    ["show_diff", {}, "allow", null],
    ["run_tests", { preset: "candidate" }, "allow", null],
    ["run_tests", { preset: "rm -rf" }, "deny", "unknown_preset"],
    ["run_tests", { preset: "constructor" }, "deny", "unknown_preset"],
    ["apply_patch", { path: "src/a.js", version: "0".repeat(64), old: "a", new: "b" }, "ask", "approval_required"],
    ["apply_patch", { path: "tests/test_agent_x.js", version: "absent", old: "", new: "b" }, "ask", "approval_required"],
    ["apply_patch", { path: "src/new.js", version: "absent", old: "", new: "b" }, "deny", "not_writable"],
    ["apply_patch", { path: "notes.txt", version: "0".repeat(64), old: "a", new: "b" }, "deny", "not_writable"],
    ["read_file", { path: "../outside" }, "deny", "path_denied"],
    ["read_file", { path: "private/diary.txt" }, "deny", "path_denied"],
    ["read_file", { path: "config/.env.production" }, "deny", "path_denied"],
    ["delete_file", { path: "x" }, "deny", "unknown_tool"],
  ])("%s %j -> %s", (name, args, verdict, code) => {
    expect(classify(name, args, task)).toMatchObject({ verdict, code });
  });

  it("a forbidden path stays denied even where the task makes it writable (asking cannot lift a deny)", () => {
    const t = TaskSpec.parse({ ...SMALL_TASK, writable: ["**"], creatable: ["**"] });
    expect(classify("apply_patch", { path: "src/.env", version: "absent", old: "", new: "K=1" }, t)).toMatchObject({ verdict: "deny", code: "path_denied" });
    expect(classify("apply_patch", { path: ".git/hooks/pre-commit", version: "absent", old: "", new: "x" }, t)).toMatchObject({ verdict: "deny" });
  });
});

describe("approvals bind run, action, arguments and workspace state", () => {
  let run: TempRun;
  afterEach(async () => run?.cleanup());
  const key = randomBytes(32);
  const SRC = "let a = 1;\nlet b = 2;\n";

  async function proposed(newText = "let a = 3;") {
    const p = await prepareApplyPatch("c1", { path: "src/a.js", version: sha256Hex(SRC), old: "let a = 1;", new: newText }, run.ctx, "run1");
    if (!p.ok) throw new Error("prepare failed");
    return p.action;
  }
  const digest = () => workspaceDigest(run.ws, run.ctl);

  it("accepts the approved action in the unchanged workspace", async () => {
    run = await tempRun({ "src/a.js": SRC });
    const action = await proposed();
    const rec = signApproval(bindingFor("run1", action), "approved", null, key);
    expect(checkApproval(rec, { runId: "run1", action, workspaceDigest: await digest() }, key)).toMatchObject({ ok: true });
  });

  it("approval for another action -> approval_stale", async () => {
    run = await tempRun({ "src/a.js": SRC });
    const approved = await proposed("let a = 3;");
    const other = await proposed("let a = 4;");
    const rec = signApproval(bindingFor("run1", approved), "approved", null, key);
    expect(checkApproval(rec, { runId: "run1", action: other, workspaceDigest: await digest() }, key)).toMatchObject({ ok: false, code: "approval_stale" });
  });

  it("approval from another run -> approval_stale", async () => {
    run = await tempRun({ "src/a.js": SRC });
    const action = await proposed();
    const rec = signApproval(bindingFor("run1", action), "approved", null, key);
    expect(checkApproval(rec, { runId: "run2", action, workspaceDigest: await digest() }, key)).toMatchObject({ ok: false, code: "approval_stale" });
  });

  it("workspace changed after proposal -> approval_stale", async () => {
    run = await tempRun({ "src/a.js": SRC, "README.md": "r" });
    const action = await proposed();
    const rec = signApproval(bindingFor("run1", action), "approved", null, key);
    await fs.writeFile(path.join(run.ws, "README.md"), "edited");
    expect(checkApproval(rec, { runId: "run1", action, workspaceDigest: await digest() }, key)).toMatchObject({ ok: false, code: "approval_stale" });
  });

  it("tampered record (re-pointed at another action, or rejected flipped to approved) -> approval_stale", async () => {
    run = await tempRun({ "src/a.js": SRC });
    const action = await proposed();
    const other = await proposed("let a = 9;");
    const rec = signApproval(bindingFor("run1", action), "approved", null, key);
    const repointed = { ...rec, binding: { ...rec.binding, action_id: other.action_id, args_digest: other.args_digest } };
    expect(checkApproval(repointed, { runId: "run1", action: other, workspaceDigest: await digest() }, key)).toMatchObject({
      ok: false,
      code: "approval_stale",
    });
    const rejected = signApproval(bindingFor("run1", action), "rejected", "no", key);
    const flipped = { ...rejected, decision: "approved" };
    expect(checkApproval(flipped, { runId: "run1", action, workspaceDigest: await digest() }, key)).toMatchObject({ ok: false, code: "approval_stale" });
    const otherKey = signApproval(bindingFor("run1", action), "approved", null, randomBytes(32));
    expect(checkApproval(otherKey, { runId: "run1", action, workspaceDigest: await digest() }, key)).toMatchObject({ ok: false, code: "approval_stale" });
  });

  it("tampered action record (content swapped, id kept) -> approval_stale", async () => {
    run = await tempRun({ "src/a.js": SRC });
    const action = await proposed();
    const rec = signApproval(bindingFor("run1", action), "approved", null, key);
    const forgedArgs = { ...action, arguments: { ...action.arguments, new: "evil();" } };
    expect(checkApproval(rec, { runId: "run1", action: forgedArgs, workspaceDigest: await digest() }, key)).toMatchObject({
      ok: false,
      code: "approval_stale",
    });
  });

  it("rejection -> approval_rejected with its reason; nothing recorded -> approval_unknown", async () => {
    run = await tempRun({ "src/a.js": SRC });
    const action = await proposed();
    const rec = signApproval(bindingFor("run1", action), "rejected", "touches the public API", key);
    expect(checkApproval(rec, { runId: "run1", action, workspaceDigest: await digest() }, key)).toMatchObject({
      ok: false,
      code: "approval_rejected",
      message: expect.stringContaining("public API"),
    });
    expect(checkApproval(undefined, { runId: "run1", action, workspaceDigest: await digest() }, key)).toMatchObject({ ok: false, code: "approval_unknown" });
  });

  it("the approval key is created once with mode 0600 and survives a reload", async () => {
    run = await tempRun({});
    const file = path.join(run.tmp, "approval.key");
    const k1 = await loadOrCreateApprovalKey(file);
    const k2 = await loadOrCreateApprovalKey(file);
    expect(k1.equals(k2)).toBe(true);
    expect(k1.length).toBe(32);
    expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
    await fs.chmod(file, 0o644);
    await expect(loadOrCreateApprovalKey(file)).rejects.toThrow();
  });
});
