import fs from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { computeManifest } from "../workspace/manifest.js";
import { sha256Hex } from "../workspace/hash.js";
import { actionIdFor, commitPreparedAction, prepareApplyPatch, verifyPreparedAction } from "./apply-patch.js";
import { tempRun, type TempRun } from "./workspace.testkit.js";

let run: TempRun;
afterEach(async () => run?.cleanup());

const SRC = "export function add(a, b) {\n  return a - b;\n}\n";
const v = (s: string) => sha256Hex(s);
const read = (rel: string) => fs.readFile(path.join(run.ws, rel), "utf8");

describe("prepareApplyPatch (a contract, not a write)", () => {
  it("records before/after hashes, the manifest digest, the diff and a content-derived id, and writes nothing", async () => {
    run = await tempRun({ "src/add.js": SRC, "notes.txt": "mine" });
    const before = await computeManifest(run.ws);
    const p = await prepareApplyPatch("c1", { path: "src/add.js", version: v(SRC), old: "a - b", new: "a + b" }, run.ctx, "run_t");
    expect(p.ok).toBe(true);
    if (!p.ok) return;
    expect(p.action).toMatchObject({
      path: "src/add.js",
      created: false,
      before_hash: v(SRC),
      after_hash: v(SRC.replace("a - b", "a + b")),
      manifest_digest: before.digest,
    });
    expect(p.action.diff).toContain("-  return a - b;\n+  return a + b;");
    expect((await computeManifest(run.ws)).digest).toBe(before.digest);
    // the same call in the same run (a replay, a resume) gets the same id; the path is normalized first
    const again = await prepareApplyPatch("c1", { path: "./src/add.js", version: v(SRC), old: "a - b", new: "a + b" }, run.ctx, "run_t");
    expect(again.ok && again.action.action_id).toBe(p.action.action_id);
    // another proposal of the same patch (a new call id) is another action with its own decision
    const reproposed = await prepareApplyPatch("c2", { path: "src/add.js", version: v(SRC), old: "a - b", new: "a + b" }, run.ctx, "run_t");
    expect(reproposed.ok && reproposed.action.action_id).not.toBe(p.action.action_id);
    // regression: the same proposal in another run got the same action id, so an audit could confuse the two
    const otherRun = await prepareApplyPatch("c1", { path: "src/add.js", version: v(SRC), old: "a - b", new: "a + b" }, run.ctx, "run_u");
    expect(otherRun.ok && otherRun.action.action_id).not.toBe(p.action.action_id);
    const different = await prepareApplyPatch("c1", { path: "src/add.js", version: v(SRC), old: "a - b", new: "b + a" }, run.ctx, "run_t");
    expect(different.ok && different.action.action_id).not.toBe(p.action.action_id);
    expect(verifyPreparedAction(p.action)).toMatchObject({ ok: true });
  });

  it("stale version is refused and the external edit is kept", async () => {
    run = await tempRun({ "src/add.js": SRC });
    const edited = SRC + "// edited by the user\n";
    await fs.writeFile(path.join(run.ws, "src/add.js"), edited);
    const p = await prepareApplyPatch("c1", { path: "src/add.js", version: v(SRC), old: "a - b", new: "a + b" }, run.ctx, "run_t");
    expect(p).toMatchObject({ ok: false, result: { error: { code: "stale_version" } } });
    expect(await read("src/add.js")).toBe(edited);
  });

  it("six-fold `old` -> non_unique_match", async () => {
    const six = "x = 1;\n".repeat(6);
    run = await tempRun({ "src/six.js": six });
    const p = await prepareApplyPatch("c1", { path: "src/six.js", version: v(six), old: "x = 1;", new: "x = 2;" }, run.ctx, "run_t");
    expect(p).toMatchObject({ ok: false, result: { error: { code: "non_unique_match" } } });
    if (!p.ok) expect(p.result.error?.message).toContain("6 times");
  });

  it.each([
    ["no_match", { old: "a * b", new: "a + b" }],
    ["no_op", { old: "a - b", new: "a - b" }],
    ["invalid_fields", { old: "", new: "x" }],
  ])("%s", async (code, patch) => {
    run = await tempRun({ "src/add.js": SRC });
    const p = await prepareApplyPatch("c1", { path: "src/add.js", version: v(SRC), ...patch }, run.ctx, "run_t");
    expect(p).toMatchObject({ ok: false, result: { error: { code } } });
  });

  it("too_large when the result would exceed the limit", async () => {
    run = await tempRun({ "src/add.js": SRC });
    const ctx = { ...run.ctx, limits: { patchMaxFileBytes: 64 } };
    const p = await prepareApplyPatch("c1", { path: "src/add.js", version: v(SRC), old: "a - b", new: "a + b".repeat(20) }, ctx, "run_t");
    expect(p).toMatchObject({ ok: false, result: { error: { code: "too_large" } } });
  });

  it("not_writable outside the task's writable globs (notes.txt is protected)", async () => {
    run = await tempRun({ "notes.txt": "mine" });
    const p = await prepareApplyPatch("c1", { path: "notes.txt", version: v("mine"), old: "mine", new: "gone" }, run.ctx, "run_t");
    expect(p).toMatchObject({ ok: false, result: { error: { code: "not_writable" } } });
  });

  it("new files only where creatable, with version=absent and old=''", async () => {
    run = await tempRun({ "src/add.js": SRC });
    const ok = await prepareApplyPatch("c1", { path: "tests/test_agent_add.js", version: "absent", old: "", new: "test\n" }, run.ctx, "run_t");
    expect(ok).toMatchObject({ ok: true, action: { created: true, before_hash: "absent" } });
    const notCreatable = await prepareApplyPatch("c2", { path: "src/new.js", version: "absent", old: "", new: "x" }, run.ctx, "run_t");
    expect(notCreatable).toMatchObject({ ok: false, result: { error: { code: "not_writable" } } });
    const exists = await prepareApplyPatch("c3", { path: "src/add.js", version: "absent", old: "", new: "x" }, run.ctx, "run_t");
    expect(exists).toMatchObject({ ok: false, result: { error: { code: "stale_version" } } });
    const gone = await prepareApplyPatch("c4", { path: "tests/test_agent_x.js", version: v("x"), old: "x", new: "y" }, run.ctx, "run_t");
    expect(gone).toMatchObject({ ok: false, result: { error: { code: "stale_version" } } });
  });

  it("a symlinked writable file is refused, not followed", async () => {
    run = await tempRun({ "src/add.js": SRC });
    await fs.writeFile(path.join(run.tmp, "outside.js"), SRC);
    await fs.symlink(path.join(run.tmp, "outside.js"), path.join(run.ws, "src/link.js"));
    const p = await prepareApplyPatch("c1", { path: "src/link.js", version: v(SRC), old: "a - b", new: "a + b" }, run.ctx, "run_t");
    expect(p).toMatchObject({ ok: false, result: { error: { code: "path_denied" } } });
    expect(await fs.readFile(path.join(run.tmp, "outside.js"), "utf8")).toBe(SRC);
  });
});

describe("commitPreparedAction", () => {
  it("writes exactly the prepared content through the control dir and leaves no temp file", async () => {
    run = await tempRun({ "src/add.js": SRC });
    await fs.chmod(path.join(run.ws, "src/add.js"), 0o640);
    const p = await prepareApplyPatch("c1", { path: "src/add.js", version: v(SRC), old: "a - b", new: "a + b" }, run.ctx, "run_t");
    if (!p.ok) throw new Error("prepare failed");
    const c = await commitPreparedAction(p.action, run.ctx);
    expect(c).toMatchObject({ ok: true, receipt: { action_id: p.action.action_id, after_hash: p.action.after_hash } });
    expect(await read("src/add.js")).toBe(SRC.replace("a - b", "a + b"));
    expect((await fs.stat(path.join(run.ws, "src/add.js"))).mode & 0o777).toBe(0o640);
    expect(await fs.readdir(path.join(run.ctl, "tmp"))).toEqual([]);
    expect((await fs.readdir(path.join(run.ws, "src"))).sort()).toEqual(["add.js"]);
  });

  it("creates a new file and its missing folder", async () => {
    run = await tempRun({ "src/add.js": SRC });
    const p = await prepareApplyPatch("c1", { path: "tests/test_agent_add.js", version: "absent", old: "", new: "// t\n" }, run.ctx, "run_t");
    if (!p.ok) throw new Error("prepare failed");
    expect((await commitPreparedAction(p.action, run.ctx)).ok).toBe(true);
    expect(await read("tests/test_agent_add.js")).toBe("// t\n");
  });

  it("workspace changed after proposal (any file) -> approval_stale, nothing written, the edit kept", async () => {
    run = await tempRun({ "src/add.js": SRC, "README.md": "r" });
    const p = await prepareApplyPatch("c1", { path: "src/add.js", version: v(SRC), old: "a - b", new: "a + b" }, run.ctx, "run_t");
    if (!p.ok) throw new Error("prepare failed");
    await fs.writeFile(path.join(run.ws, "README.md"), "edited elsewhere");
    const c = await commitPreparedAction(p.action, run.ctx);
    expect(c).toMatchObject({ ok: false, result: { error: { code: "approval_stale" } } });
    expect(await read("src/add.js")).toBe(SRC);
    expect(await read("README.md")).toBe("edited elsewhere");
  });

  it("the target itself edited after proposal -> approval_stale with the user's edit kept", async () => {
    run = await tempRun({ "src/add.js": SRC });
    const p = await prepareApplyPatch("c1", { path: "src/add.js", version: v(SRC), old: "a - b", new: "a + b" }, run.ctx, "run_t");
    if (!p.ok) throw new Error("prepare failed");
    await fs.writeFile(path.join(run.ws, "src/add.js"), "user's version\n");
    expect(await commitPreparedAction(p.action, run.ctx)).toMatchObject({ ok: false, result: { error: { code: "approval_stale" } } });
    expect(await read("src/add.js")).toBe("user's version\n");
  });

  it("a tampered action record (content swapped after approval) is refused", async () => {
    run = await tempRun({ "src/add.js": SRC });
    const p = await prepareApplyPatch("c1", { path: "src/add.js", version: v(SRC), old: "a - b", new: "a + b" }, run.ctx, "run_t");
    if (!p.ok) throw new Error("prepare failed");
    const forged = { ...p.action, new_content: "evil()\n", after_hash: v("evil()\n") };
    expect(await commitPreparedAction(forged, run.ctx)).toMatchObject({ ok: false, result: { error: { code: "approval_stale" } } });
    const shownOtherDiff = { ...p.action, diff: p.action.diff.replace("+  return a + b;", "+  return a + b; // harmless") };
    expect(await commitPreparedAction(shownOtherDiff, run.ctx)).toMatchObject({ ok: false, result: { error: { code: "approval_stale" } } });
    const madeExecutable = { ...p.action, mode: 0o755 };
    expect(await commitPreparedAction(madeExecutable, run.ctx)).toMatchObject({ ok: false, result: { error: { code: "approval_stale" } } });
    const rerouted = { ...p.action, path: "src/other.js" };
    expect(await commitPreparedAction(rerouted, run.ctx)).toMatchObject({ ok: false });
    expect(await read("src/add.js")).toBe(SRC);
  });

  it("committing the same action twice writes once; the second sees a changed workspace", async () => {
    run = await tempRun({ "src/add.js": SRC });
    const p = await prepareApplyPatch("c1", { path: "src/add.js", version: v(SRC), old: "a - b", new: "a + b" }, run.ctx, "run_t");
    if (!p.ok) throw new Error("prepare failed");
    expect((await commitPreparedAction(p.action, run.ctx)).ok).toBe(true);
    expect(await commitPreparedAction(p.action, run.ctx)).toMatchObject({ ok: false, result: { error: { code: "approval_stale" } } });
    expect(await read("src/add.js")).toBe(SRC.replace("a - b", "a + b"));
  });

  it("a stored action with an unknown schema_version is refused", async () => {
    run = await tempRun({ "src/add.js": SRC });
    const p = await prepareApplyPatch("c1", { path: "src/add.js", version: v(SRC), old: "a - b", new: "a + b" }, run.ctx, "run_t");
    if (!p.ok) throw new Error("prepare failed");
    expect(verifyPreparedAction({ ...p.action, schema_version: 2 })).toMatchObject({ ok: false });
    expect(await commitPreparedAction({ ...p.action, schema_version: 2 } as never, run.ctx)).toMatchObject({ ok: false });
    expect(await read("src/add.js")).toBe(SRC);
  });

  it("actionIdFor is stable across key order and changes with the run, the call, the content and the workspace", () => {
    const base = { runId: "run_a", callId: "c1", name: "apply_patch", args: { a: 1, b: 2 }, manifestDigest: "0".repeat(64) };
    expect(actionIdFor(base)).toBe(actionIdFor({ ...base, args: { b: 2, a: 1 } }));
    for (const change of [{ runId: "run_b" }, { callId: "c2" }, { args: { a: 1 } }, { manifestDigest: "1".repeat(64) }]) {
      expect(actionIdFor({ ...base, ...change })).not.toBe(actionIdFor(base));
    }
  });

  it("a record moved to another run no longer verifies (its id names its run)", async () => {
    run = await tempRun({ "src/add.js": SRC });
    const p = await prepareApplyPatch("c1", { path: "src/add.js", version: v(SRC), old: "a - b", new: "a + b" }, run.ctx, "run_t");
    if (!p.ok) throw new Error("prepare failed");
    expect(verifyPreparedAction({ ...p.action, run_id: "run_other" })).toMatchObject({ ok: false });
  });
});
