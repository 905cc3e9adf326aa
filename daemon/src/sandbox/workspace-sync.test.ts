import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isMiniAgentError } from "../errors.js";
import { planSync, workspaceManifest } from "./workspace-sync.js";

let dir: string;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), "mini-agent-sync-"));
  await fs.mkdir(path.join(dir, "sub"));
  await fs.writeFile(path.join(dir, "a.txt"), "a1");
  await fs.writeFile(path.join(dir, "sub/b.txt"), "b1");
  await fs.mkdir(path.join(dir, ".git"));
  await fs.writeFile(path.join(dir, ".git/HEAD"), "x");
  await fs.symlink("a.txt", path.join(dir, "link"));
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe("workspaceManifest / planSync", () => {
  it("lists files, directories and links, never .git", () => {
    const m = workspaceManifest(dir);
    expect([...m.keys()]).toEqual(["a.txt", "link", "sub", "sub/b.txt"]);
    expect(m.get("link")).toMatchObject({ kind: "link", link: "a.txt" });
  });

  it("an empty sandbox gets everything; an unchanged tree gets nothing", () => {
    const m = workspaceManifest(dir);
    expect(planSync(null, m)).toEqual({ kind: "full", clearFirst: false });
    expect(planSync(m, workspaceManifest(dir))).toEqual({ kind: "none" });
  });

  it("a same-size rewrite and a new directory are sent; the new directory's content goes with it", async () => {
    const m = workspaceManifest(dir);
    await fs.writeFile(path.join(dir, "a.txt"), "a2");
    await fs.mkdir(path.join(dir, "new/deep"), { recursive: true });
    await fs.writeFile(path.join(dir, "new/deep/c.txt"), "c");
    expect(planSync(m, workspaceManifest(dir))).toEqual({ kind: "partial", entries: ["a.txt", "new"] });
  });

  it("a chmod counts as a change", async () => {
    const m = workspaceManifest(dir);
    await fs.chmod(path.join(dir, "sub/b.txt"), 0o755);
    expect(planSync(m, workspaceManifest(dir))).toEqual({ kind: "partial", entries: ["sub/b.txt"] });
  });

  it("a deletion or a changed type needs the sandbox emptied and a full sync (regression: a deleted file must not survive in the sandbox)", async () => {
    const m = workspaceManifest(dir);
    await fs.rm(path.join(dir, "sub/b.txt"));
    expect(planSync(m, workspaceManifest(dir))).toEqual({ kind: "full", clearFirst: true });
    const m2 = workspaceManifest(dir);
    await fs.rm(path.join(dir, "link"));
    await fs.mkdir(path.join(dir, "link"));
    expect(planSync(m2, workspaceManifest(dir))).toEqual({ kind: "full", clearFirst: true });
  });

  it("refuses a missing workspace and a symlinked root", async () => {
    expect(isMiniAgentError((() => { try { workspaceManifest(path.join(dir, "nope")); } catch (e) { return e; } })(), "not_found")).toBe(true);
    expect(isMiniAgentError((() => { try { workspaceManifest(path.join(dir, "link")); } catch (e) { return e; } })(), "invalid_fields")).toBe(true);
  });
});
