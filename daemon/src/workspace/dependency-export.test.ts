import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { findDependencyDirs } from "./dependency-dirs.js";
import { listLayerContent } from "./dependency-export.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function ws(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "ma-depexp-"));
  dirs.push(d);
  fs.mkdirSync(path.join(d, "node_modules/a/bin"), { recursive: true });
  fs.mkdirSync(path.join(d, "node_modules/.bin"));
  fs.writeFileSync(path.join(d, "node_modules/a/bin/a.js"), "x", { mode: 0o755 });
  fs.writeFileSync(path.join(d, "node_modules/.npmrc"), "//r/:_authToken=secret\n");
  fs.symlinkSync("../a/bin/a.js", path.join(d, "node_modules/.bin/a"));
  fs.symlinkSync(path.join(d, "node_modules/a"), path.join(d, "node_modules/abs-inside"));
  fs.symlinkSync("/etc/passwd", path.join(d, "node_modules/escape"));
  fs.writeFileSync(path.join(d, "package-lock.json"), "{}");
  return d;
}

describe("a dependency folder's layer content", () => {
  it("keeps links that resolve inside the folder (relative), drops one that leaves it, and leaves out forbidden files such as .npmrc", async () => {
    const c = await listLayerContent(ws(), "node_modules");
    const byRel = Object.fromEntries(c.entries.map((e) => [e.rel, e]));
    expect(byRel[".bin/a"]).toMatchObject({ type: "symlink", target: "../a/bin/a.js" });
    expect(byRel["abs-inside"]).toMatchObject({ type: "symlink", target: "a" });
    expect(byRel.escape).toBeUndefined();
    expect(byRel[".npmrc"]).toBeUndefined();
    expect(byRel["a/bin/a.js"]).toMatchObject({ type: "file", executable: true });
    expect(c.locks).toHaveProperty("package-lock.json");
  });

  it("the key changes with the lock file and with the content, and only then", async () => {
    const d = ws();
    const k1 = (await listLayerContent(d, "node_modules")).key;
    expect((await listLayerContent(d, "node_modules")).key).toBe(k1);
    fs.writeFileSync(path.join(d, "package-lock.json"), '{"v":2}');
    const k2 = (await listLayerContent(d, "node_modules")).key;
    expect(k2).not.toBe(k1);
    fs.writeFileSync(path.join(d, "node_modules/a/bin/a.js"), "y");
    expect((await listLayerContent(d, "node_modules")).key).not.toBe(k2);
  });

  it("vendor is a dependency folder only beside a go.mod; a symlinked node_modules is none", () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), "ma-depdirs-"));
    dirs.push(d);
    fs.mkdirSync(path.join(d, "vendor"));
    fs.mkdirSync(path.join(d, "real"));
    fs.symlinkSync(path.join(d, "real"), path.join(d, "node_modules"));
    expect(findDependencyDirs(d)).toEqual([]);
    fs.writeFileSync(path.join(d, "go.mod"), "module x\n");
    expect(findDependencyDirs(d)).toEqual(["vendor"]);
  });
});
