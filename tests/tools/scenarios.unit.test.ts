import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { bindingFor, checkApproval, signApproval } from "../../daemon/src/policy/approvals.js";
import { classify } from "../../daemon/src/policy/classify.js";
import { commitPreparedAction, prepareApplyPatch } from "../../daemon/src/tools/apply-patch.js";
import { runReadOnlyTool } from "../../daemon/src/tools/index.js";
import { validateToolCall } from "../../daemon/src/tools/validate.js";
import { fixtureRun, type TempRun } from "../../daemon/src/tools/workspace.testkit.js";
import { captureBaseline } from "../../daemon/src/workspace/baseline.js";
import { sha256Hex } from "../../daemon/src/workspace/hash.js";
import { computeManifest } from "../../daemon/src/workspace/manifest.js";
import { workspaceDigest } from "../../daemon/src/workspace/version.js";

/**
 * Issue 3's scenarios on a real copy of fixtures/linkcheck, going through the
 * same chain the runtime uses: validate -> classify -> prepare -> approve -> commit.
 */
let run: TempRun;
afterEach(async () => run?.cleanup());

const key = randomBytes(32);
const FIX_OLD = "    const resolved = path.join(rootDir, file);";
const FIX_NEW = "    const resolved = path.join(path.dirname(docAbs), file);";
const ws = (rel: string) => path.join(run.ws, rel);

/** everything observable: workspace manifest plus the control dir listing */
async function snapshot(): Promise<string> {
  const m = await computeManifest(run.ws);
  const control = await fs.readdir(run.ctl, { recursive: true }).catch(() => []);
  return JSON.stringify([m.digest, control.sort()]);
}

async function srcVersion(): Promise<string> {
  return sha256Hex(await fs.readFile(ws("src/linkcheck.js")));
}

/** the full chain; returns the error code of the first refusal, or "written" */
async function propose(
  raw: unknown,
  approve: (a: import("../../daemon/src/contracts/tool-call.js").PreparedAction) => Promise<unknown> = async (a) =>
    signApproval(bindingFor("run1", a), "approved", null, key),
): Promise<string> {
  const v = validateToolCall(raw);
  if (!v.ok) return v.result.error!.code;
  const policy = classify(v.name, v.args, run.ctx.task);
  if (policy.verdict === "deny") return policy.code!;
  if (v.name !== "apply_patch") {
    const r = await runReadOnlyTool(v, run.ctx);
    return r.ok ? "read" : r.error!.code;
  }
  const p = await prepareApplyPatch(v.call.call_id, v.args, run.ctx, "run1");
  if (!p.ok) return p.result.error!.code;
  const record = await approve(p.action);
  const check = checkApproval(record, { runId: "run1", action: p.action, workspaceDigest: await workspaceDigest(run.ws, run.ctl) }, key);
  if (!check.ok) return check.code;
  const c = await commitPreparedAction(p.action, run.ctx);
  return c.ok ? "written" : c.result.error!.code;
}

describe("fail closed before any side effect", () => {
  it("unknown tool and extra fields are rejected and the manifest is unchanged", async () => {
    run = await fixtureRun("linkcheck");
    await captureBaseline(run.ws, run.ctl);
    const before = await snapshot();
    expect(await propose({ call_id: "c1", name: "write_file", arguments: { path: "src/linkcheck.js", content: "" } })).toBe("unknown_tool");
    expect(
      await propose({
        call_id: "c2",
        name: "apply_patch",
        arguments: { path: "src/linkcheck.js", version: await srcVersion(), old: FIX_OLD, new: FIX_NEW, force: true },
      }),
    ).toBe("invalid_fields");
    expect(
      await propose({
        call_id: "c3",
        name: "apply_patch",
        arguments: { path: "src/linkcheck.js", version: await srcVersion(), old: FIX_OLD, new: FIX_NEW },
        approved: true,
      }),
    ).toBe("invalid_fields");
    expect(await snapshot()).toBe(before);
  });

  it("../outside -> path_denied for reads and writes", async () => {
    run = await fixtureRun("linkcheck");
    await fs.writeFile(path.join(run.tmp, "outside"), "secret");
    const before = await snapshot();
    expect(await propose({ call_id: "c1", name: "read_file", arguments: { path: "../outside" } })).toBe("path_denied");
    expect(await propose({ call_id: "c2", name: "search", arguments: { query: "secret", path: "../" } })).toBe("path_denied");
    expect(
      await propose({ call_id: "c3", name: "apply_patch", arguments: { path: "src/../../outside", version: sha256Hex("secret"), old: "secret", new: "x" } }),
    ).toBe("path_denied");
    expect(await fs.readFile(path.join(run.tmp, "outside"), "utf8")).toBe("secret");
    expect(await snapshot()).toBe(before);
  });

  it("symlink escapes are refused: a linked file and a linked folder inside writable src/", async () => {
    run = await fixtureRun("linkcheck");
    await fs.mkdir(path.join(run.tmp, "outside"));
    await fs.writeFile(path.join(run.tmp, "outside/target.js"), "x = 1;\n");
    await fs.symlink(path.join(run.tmp, "outside/target.js"), ws("src/evil.js"));
    await fs.symlink(path.join(run.tmp, "outside"), ws("src/dir"));
    const v = sha256Hex("x = 1;\n");
    expect(await propose({ call_id: "c1", name: "read_file", arguments: { path: "src/evil.js" } })).toBe("path_denied");
    expect(await propose({ call_id: "c2", name: "apply_patch", arguments: { path: "src/evil.js", version: v, old: "x = 1;", new: "x = 2;" } })).toBe(
      "path_denied",
    );
    expect(await propose({ call_id: "c3", name: "apply_patch", arguments: { path: "src/dir/target.js", version: v, old: "x = 1;", new: "x = 2;" } })).toBe(
      "path_denied",
    );
    expect(await fs.readFile(path.join(run.tmp, "outside/target.js"), "utf8")).toBe("x = 1;\n");
  });

  it("hard-link escape is refused: a writable name sharing its inode with a file outside", async () => {
    run = await fixtureRun("linkcheck");
    await fs.writeFile(path.join(run.tmp, "outside.js"), "x = 1;\n");
    await fs.link(path.join(run.tmp, "outside.js"), ws("src/shared.js"));
    expect(
      await propose({ call_id: "c1", name: "apply_patch", arguments: { path: "src/shared.js", version: sha256Hex("x = 1;\n"), old: "x = 1;", new: "x = 2;" } }),
    ).toBe("path_denied");
    expect(await propose({ call_id: "c2", name: "read_file", arguments: { path: "src/shared.js" } })).toBe("path_denied");
    expect(await fs.readFile(path.join(run.tmp, "outside.js"), "utf8")).toBe("x = 1;\n");
  });

  it("protected notes.txt cannot be patched even with an approval", async () => {
    run = await fixtureRun("linkcheck");
    const notes = await fs.readFile(ws("notes.txt"), "utf8");
    expect(await propose({ call_id: "c1", name: "apply_patch", arguments: { path: "notes.txt", version: sha256Hex(notes), old: "TODO", new: "DONE" } })).toBe(
      "not_writable",
    );
    expect(await fs.readFile(ws("notes.txt"), "utf8")).toBe(notes);
  });
});

describe("versions and matches", () => {
  it("stale version is refused and the external edit is kept", async () => {
    run = await fixtureRun("linkcheck");
    const version = await srcVersion();
    const edited = (await fs.readFile(ws("src/linkcheck.js"), "utf8")) + "\n// user's own change\n";
    await fs.writeFile(ws("src/linkcheck.js"), edited);
    expect(await propose({ call_id: "c1", name: "apply_patch", arguments: { path: "src/linkcheck.js", version, old: FIX_OLD, new: FIX_NEW } })).toBe(
      "stale_version",
    );
    expect(await fs.readFile(ws("src/linkcheck.js"), "utf8")).toBe(edited);
  });

  it("six-fold `old` -> non_unique_match, nothing written", async () => {
    run = await fixtureRun("linkcheck");
    const six = "// same line\n".repeat(6);
    await fs.writeFile(ws("src/six.js"), six);
    const before = await snapshot();
    expect(
      await propose({ call_id: "c1", name: "apply_patch", arguments: { path: "src/six.js", version: sha256Hex(six), old: "// same line", new: "// changed" } }),
    ).toBe("non_unique_match");
    expect(await snapshot()).toBe(before);
  });
});

describe("approvals", () => {
  it("an approval for another action is refused (approval_stale) and nothing is written", async () => {
    run = await fixtureRun("linkcheck");
    const version = await srcVersion();
    const otherAction = await prepareApplyPatch("cX", { path: "src/linkcheck.js", version, old: FIX_OLD, new: "    const resolved = file;" }, run.ctx, "run1");
    if (!otherAction.ok) throw new Error("prepare failed");
    const before = await snapshot();
    const code = await propose({ call_id: "c1", name: "apply_patch", arguments: { path: "src/linkcheck.js", version, old: FIX_OLD, new: FIX_NEW } }, async () =>
      signApproval(bindingFor("run1", otherAction.action), "approved", null, key),
    );
    expect(code).toBe("approval_stale");
    expect(await snapshot()).toBe(before);
  });

  it("a workspace edited after approval is refused at commit (approval_stale), the edit kept", async () => {
    run = await fixtureRun("linkcheck");
    const version = await srcVersion();
    const code = await propose(
      { call_id: "c1", name: "apply_patch", arguments: { path: "src/linkcheck.js", version, old: FIX_OLD, new: FIX_NEW } },
      async (a) => {
        const rec = signApproval(bindingFor("run1", a), "approved", null, key);
        // the user edits README.md while the approval prompt is open
        await fs.appendFile(ws("README.md"), "\nedited while waiting\n");
        return rec;
      },
    );
    expect(code).toBe("approval_stale");
    expect(await fs.readFile(ws("README.md"), "utf8")).toContain("edited while waiting");
    expect(await srcVersion()).toBe(version);
  });

  it("the approved fix is written exactly once", async () => {
    run = await fixtureRun("linkcheck");
    const version = await srcVersion();
    expect(await propose({ call_id: "c1", name: "apply_patch", arguments: { path: "src/linkcheck.js", version, old: FIX_OLD, new: FIX_NEW } })).toBe("written");
    expect(await fs.readFile(ws("src/linkcheck.js"), "utf8")).toContain(FIX_NEW);
    expect(await propose({ call_id: "c2", name: "apply_patch", arguments: { path: "src/linkcheck.js", version, old: FIX_OLD, new: FIX_NEW } })).toBe(
      "stale_version",
    );
  });
});
