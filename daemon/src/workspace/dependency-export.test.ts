import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { findDependencyDirs } from "./dependency-dirs.js";
import { listLayerContent } from "./dependency-export.js";
import { hashNoFollow } from "./read.js";

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

/** reads counted: what the stat index saves is exactly these */
function countingReader() {
  const read: string[] = [];
  return {
    read,
    hashFile: (abs: string) => {
      read.push(abs);
      return hashNoFollow(abs, null);
    },
  };
}

/** a clock 10 s ahead: every file the test wrote is older than the racily-clean line */
const later = () => Date.now() + 10_000;

/** a whole-second mtime, so utimes can put back exactly the same nanoseconds */
const OLD = 1_700_000_000;

describe("re-keying a dependency folder with its stat index", () => {
  it("an unchanged folder is keyed from the index without reading one file, to the key a full read gives", async () => {
    const d = ws();
    const first = await listLayerContent(d, "node_modules", undefined, { now: later });
    const r = countingReader();
    const again = await listLayerContent(d, "node_modules", undefined, { index: first.index, now: later, hashFile: r.hashFile });
    expect(r.read).toEqual([]);
    expect(again).toMatchObject({ key: first.key, fromIndex: 1, hashed: 0, unchanged: true });
  });

  it("regression: a file changed since the index is read again and the key is a full read's (a stale key would name other bytes)", async () => {
    const d = ws();
    const first = await listLayerContent(d, "node_modules", undefined, { now: later });
    fs.writeFileSync(path.join(d, "node_modules/a/bin/a.js"), "changed");
    const r = countingReader();
    const again = await listLayerContent(d, "node_modules", undefined, { index: first.index, now: later, hashFile: r.hashFile });
    expect(r.read).toEqual([path.join(d, "node_modules/a/bin/a.js")]);
    expect(again.key).not.toBe(first.key);
    expect(again.key).toBe((await listLayerContent(d, "node_modules")).key);
    expect(again.unchanged).toBe(false);
  });

  it("regression: a rewrite of the same size with the old mtime put back is caught by ctime, and a file renamed over it by its inode", async () => {
    const d = ws();
    const file = path.join(d, "node_modules/a/bin/a.js");
    fs.utimesSync(file, OLD, OLD);
    const first = await listLayerContent(d, "node_modules", undefined, { now: later });
    const before = fs.statSync(file, { bigint: true });
    await new Promise((res) => setTimeout(res, 20));
    fs.writeFileSync(file, "z");
    fs.utimesSync(file, OLD, OLD);
    const after = fs.statSync(file, { bigint: true });
    expect([after.ino, after.size, after.mtimeNs]).toEqual([before.ino, before.size, before.mtimeNs]);
    const rewritten = await listLayerContent(d, "node_modules", undefined, { index: first.index, now: later });
    expect(rewritten).toMatchObject({ hashed: 1, fromIndex: 0 });
    expect(rewritten.key).not.toBe(first.key);
    expect(rewritten.key).toBe((await listLayerContent(d, "node_modules")).key);

    // another file of the same size and mtime put in its place: a new inode
    fs.writeFileSync(`${file}.new`, "w", { mode: 0o755 });
    fs.utimesSync(`${file}.new`, OLD, OLD);
    fs.renameSync(`${file}.new`, file);
    const replaced = await listLayerContent(d, "node_modules", undefined, { index: rewritten.index, now: later });
    expect(replaced.hashed).toBe(1);
    expect(replaced.key).toBe((await listLayerContent(d, "node_modules")).key);
    expect(replaced.key).not.toBe(rewritten.key);
  });

  it("an added and a removed entry change the key to a full read's, reading only the new file", async () => {
    const d = ws();
    fs.writeFileSync(path.join(d, "node_modules/a/extra.js"), "e");
    const first = await listLayerContent(d, "node_modules", undefined, { now: later });
    fs.rmSync(path.join(d, "node_modules/a/extra.js"));
    const removed = await listLayerContent(d, "node_modules", undefined, { index: first.index, now: later });
    expect(removed).toMatchObject({ hashed: 0, unchanged: false });
    expect(removed.key).not.toBe(first.key);
    expect(removed.key).toBe((await listLayerContent(d, "node_modules")).key);
    fs.writeFileSync(path.join(d, "node_modules/a/new.js"), "n");
    const r = countingReader();
    const added = await listLayerContent(d, "node_modules", undefined, { index: removed.index, now: later, hashFile: r.hashFile });
    expect(r.read).toEqual([path.join(d, "node_modules/a/new.js")]);
    expect(added.key).toBe((await listLayerContent(d, "node_modules")).key);
    // a link now pointing elsewhere is no file content: taken from the walk, and the key follows it
    fs.rmSync(path.join(d, "node_modules/.bin/a"));
    fs.symlinkSync("../a/new.js", path.join(d, "node_modules/.bin/a"));
    const relinked = await listLayerContent(d, "node_modules", undefined, { index: added.index, now: later });
    expect(relinked.key).toBe((await listLayerContent(d, "node_modules")).key);
    expect(relinked.key).not.toBe(added.key);
  });

  it("regression: a file whose stamps are not older than the index's walk (racily clean) is read again, though every stamp matches", async () => {
    const d = ws();
    const file = path.join(d, "node_modules/a/bin/a.js");
    // indexed by a walk that began at the file's own change time: a second write in that tick would keep every stamp
    const changed = Number(fs.statSync(file, { bigint: true }).ctimeNs / 1_000_000n);
    const first = await listLayerContent(d, "node_modules", undefined, { now: () => changed });
    const r = countingReader();
    const again = await listLayerContent(d, "node_modules", undefined, { index: first.index, now: later, hashFile: r.hashFile });
    expect(r.read).toEqual([file]);
    expect(again.key).toBe(first.key);
    // written back with the later walk: from then on the file is old enough to be trusted
    const r2 = countingReader();
    await listLayerContent(d, "node_modules", undefined, { index: again.index, now: later, hashFile: r2.hashFile });
    expect(r2.read).toEqual([]);
  });

  it("a forbidden file (.npmrc) never enters the index, and changing it keeps the key", async () => {
    const d = ws();
    const first = await listLayerContent(d, "node_modules", undefined, { now: later });
    expect(first.index.entries.map((e) => e.rel)).not.toContain(".npmrc");
    expect(JSON.stringify(first.index)).not.toContain("npmrc");
    fs.writeFileSync(path.join(d, "node_modules/.npmrc"), "//r/:_authToken=another\n");
    const again = await listLayerContent(d, "node_modules", undefined, { index: first.index, now: later });
    expect(again).toMatchObject({ key: first.key, hashed: 0, unchanged: true });
  });
});
