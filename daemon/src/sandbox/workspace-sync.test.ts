import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ExportSpec } from "../contracts/sandbox.js";
import { listExport } from "../workspace/index.js";
import { exportManifest, planSync } from "./workspace-sync.js";

let dir: string;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), "mini-agent-sync-"));
  await fs.mkdir(path.join(dir, "sub"));
  await fs.writeFile(path.join(dir, "a.txt"), "a1");
  await fs.writeFile(path.join(dir, "sub/b.txt"), "b1");
  await fs.mkdir(path.join(dir, ".git"));
  await fs.writeFile(path.join(dir, ".git/HEAD"), "x");
  await fs.writeFile(path.join(dir, ".env"), "PASSWORD=one");
  await fs.symlink("a.txt", path.join(dir, "link"));
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

/** what the warm session compares: the manifest of the export list */
const manifest = async (spec?: ExportSpec) => exportManifest(await listExport(dir, spec));

describe("exportManifest / planSync", () => {
  it("lists exactly what the export rule lets out: files, folders and links inside, never .git, .env or a link out", async () => {
    await fs.symlink(".env", path.join(dir, "env-link"));
    await fs.symlink("../outside", path.join(dir, "out-link"));
    const m = await manifest();
    expect([...m.keys()]).toEqual(["a.txt", "link", "sub", "sub/b.txt"]);
    expect(m.get("link")).toMatchObject({ kind: "symlink", target: "a.txt" });
  });

  it("an unchanged link is not sent again; a link whose rewritten target moved (a hop retargeted) is, though its own lstat did not change", async () => {
    await fs.writeFile(path.join(dir, "c.txt"), "c");
    await fs.symlink("link", path.join(dir, "chain"));
    const m = await manifest();
    expect(m.get("chain")).toMatchObject({ kind: "symlink", target: "a.txt" });
    expect(planSync(m, await manifest())).toEqual({ kind: "none" });
    await fs.rm(path.join(dir, "link"));
    await fs.symlink("c.txt", path.join(dir, "link"));
    expect(planSync(m, await manifest())).toEqual({ kind: "partial", entries: ["chain", "link"] });
  });

  it("a file replaced by a link (or a link whose target went away) empties the sandbox first", async () => {
    const m = await manifest();
    await fs.rm(path.join(dir, "a.txt"));
    await fs.symlink("sub/b.txt", path.join(dir, "a.txt"));
    expect(planSync(m, await manifest())).toEqual({ kind: "full", clearFirst: true });
  });

  it("an empty sandbox gets everything; an unchanged tree gets nothing", async () => {
    const m = await manifest();
    expect(planSync(null, m)).toEqual({ kind: "full", clearFirst: false });
    expect(planSync(m, await manifest())).toEqual({ kind: "none" });
  });

  it("a same-size rewrite and a new directory are sent, each path of the new directory listed", async () => {
    const m = await manifest();
    await fs.writeFile(path.join(dir, "a.txt"), "a2");
    await fs.mkdir(path.join(dir, "new/deep"), { recursive: true });
    await fs.writeFile(path.join(dir, "new/deep/c.txt"), "c");
    expect(planSync(m, await manifest())).toEqual({ kind: "partial", entries: ["a.txt", "new", "new/deep", "new/deep/c.txt"] });
  });

  it("a chmod counts as a change", async () => {
    const m = await manifest();
    await fs.chmod(path.join(dir, "sub/b.txt"), 0o755);
    expect(planSync(m, await manifest())).toEqual({ kind: "partial", entries: ["sub/b.txt"] });
  });

  it("a deletion or a changed type needs the sandbox emptied and a full sync (regression: a deleted file must not survive in the sandbox)", async () => {
    const m = await manifest();
    await fs.rm(path.join(dir, "sub/b.txt"));
    expect(planSync(m, await manifest())).toEqual({ kind: "full", clearFirst: true });
    const m2 = await manifest();
    await fs.rm(path.join(dir, "a.txt"));
    await fs.mkdir(path.join(dir, "a.txt"));
    expect(planSync(m2, await manifest())).toEqual({ kind: "full", clearFirst: true });
  });

  it("regression: a forbidden file changed on the host is never synced in (the partial sync used its own walk that skipped only .git)", async () => {
    const m = await manifest({ forbidden: ["sub/secret.txt"], include: [] });
    await fs.writeFile(path.join(dir, ".env"), "PASSWORD=two");
    await fs.writeFile(path.join(dir, ".env.local"), "new");
    await fs.writeFile(path.join(dir, "sub/secret.txt"), "task-forbidden");
    await fs.mkdir(path.join(dir, ".ssh"));
    await fs.writeFile(path.join(dir, ".ssh/id_ed25519"), "key");
    expect(planSync(m, await manifest({ forbidden: ["sub/secret.txt"], include: [] }))).toEqual({ kind: "none" });
  });

  it("a file that becomes hard-linked leaves the sandbox: its copy is emptied out with a full sync", async () => {
    const m = await manifest();
    await fs.link(path.join(dir, "a.txt"), path.join(dir, "..", `${path.basename(dir)}-other-name`));
    try {
      const now = await manifest();
      expect(now.has("a.txt")).toBe(false);
      expect(planSync(m, now)).toEqual({ kind: "full", clearFirst: true });
    } finally {
      await fs.rm(path.join(dir, "..", `${path.basename(dir)}-other-name`), { force: true });
    }
  });
});
