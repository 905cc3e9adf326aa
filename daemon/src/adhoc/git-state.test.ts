import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { confinedFs } from "./confined-fs.js";
import { dirtyFiles, GIT_STATE_LIMITS } from "./git-state.js";

/**
 * The dirty-worktree reader: git's on-disk format read as data. Repositories
 * are made with the real git (the test's own, with no user config) so the
 * index and objects are exactly what a user's checkout holds.
 */
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true, maxRetries: 5 });
});
function tmp(prefix = "git-state-"): string {
  const d = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  dirs.push(d);
  return d;
}
function write(root: string, files: Record<string, string>): void {
  for (const [rel, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), content);
  }
}
const git = (cwd: string, ...args: string[]) =>
  // gc.auto=0: a commit of thousands of loose objects would start `git gc --auto` in the background,
  // still writing into .git while the folder is removed (ENOTEMPTY)
  execFileSync("git", ["-c", "user.email=t@t", "-c", "user.name=t", "-c", "gc.auto=0", ...args], {
    cwd,
    env: { PATH: process.env.PATH, HOME: "/nonexistent", GIT_CONFIG_NOSYSTEM: "1" },
    stdio: "pipe",
  }).toString();
function repo(files: Record<string, string> = { "a.txt": "a\n", "src/x.js": "x\n", "src/y.js": "y\n", ".gitignore": "*.log\nbuild/\n" }): string {
  const ws = tmp();
  write(ws, files);
  git(ws, "init", "-q");
  git(ws, "add", "-A");
  git(ws, "commit", "-qm", "init");
  return ws;
}
/** what `git status` itself lists (porcelain, untracked files one by one), for comparison */
const gitSays = (ws: string) =>
  git(ws, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames")
    .split("\0")
    .filter((e) => e.length > 3)
    .map((e) => e.slice(3))
    .sort();

describe("dirtyFiles: what changed against the index and HEAD", () => {
  it("modified, staged (new and changed), deleted, unstaged-deleted, untracked are listed; ignored files and folders are not; same list as git status", async () => {
    const ws = repo();
    expect(await dirtyFiles(ws)).toEqual({ files: [], unavailable: null });
    write(ws, { "src/x.js": "changed\n", "new.txt": "n", "debug.log": "", "build/out.js": "", "staged.txt": "s", "src/y.js": "y2\n" });
    git(ws, "add", "staged.txt", "src/y.js");
    // staged, then the worktree put back to HEAD's content: still differs from HEAD in the index
    write(ws, { "src/y.js": "y\n" });
    fs.rmSync(path.join(ws, "a.txt"));
    const d = await dirtyFiles(ws);
    expect(d).toEqual({ files: ["a.txt", "new.txt", "src/x.js", "src/y.js", "staged.txt"], unavailable: null });
    expect(d.files).toEqual(gitSays(ws));
  });

  it("a repository with no commit yet lists what is staged and untracked", async () => {
    const ws = tmp();
    write(ws, { "a.txt": "a", "b.txt": "b" });
    git(ws, "init", "-q");
    git(ws, "add", "a.txt");
    expect((await dirtyFiles(ws)).files).toEqual(["a.txt", "b.txt"]);
  });

  it("index format 2 and 3 (intent-to-add) give git's list", async () => {
    const ws = repo();
    write(ws, { "src/x.js": "changed\n", "later.txt": "l" });
    git(ws, "update-index", "--index-version", "3");
    git(ws, "add", "-N", "later.txt");
    expect((await dirtyFiles(ws)).files).toEqual(["later.txt", "src/x.js"]);
    expect(gitSays(ws)).toEqual(["later.txt", "src/x.js"]);
  });

  it("symlinks are listed as files (their target text compared), never followed, even to a folder outside", async () => {
    const outside = tmp("git-state-outside-");
    write(outside, { "secret.txt": "s", "deep/file.txt": "f" });
    const ws = repo();
    fs.symlinkSync("a.txt", path.join(ws, "tracked-link"));
    git(ws, "add", "tracked-link");
    git(ws, "commit", "-qm", "link");
    fs.rmSync(path.join(ws, "tracked-link"));
    fs.symlinkSync("src/x.js", path.join(ws, "tracked-link")); // retargeted: changed
    fs.symlinkSync(outside, path.join(ws, "out-dir"));
    fs.symlinkSync(path.join(outside, "secret.txt"), path.join(ws, "out-file"));
    expect((await dirtyFiles(ws)).files).toEqual(["out-dir", "out-file", "tracked-link"]);
  });

  it("never writes to the repository: the index is byte-identical after a read that found changed stat data", async () => {
    const ws = repo();
    const index = path.join(ws, ".git/index");
    const before = fs.readFileSync(index);
    const mtime = fs.statSync(index).mtimeMs;
    // same content, new stat data: the case where a reader may refresh the index
    const t = new Date(Date.now() + 60_000);
    fs.utimesSync(path.join(ws, "src/x.js"), t, t);
    expect((await dirtyFiles(ws)).files).toEqual([]);
    expect(fs.readFileSync(index).equals(before)).toBe(true);
    expect(fs.statSync(index).mtimeMs).toBe(mtime);
  });
});

describe("dirtyFiles: what it refuses to follow, and its bounds", () => {
  it("a .git file (linked worktree, submodule) or a .git symlink names a git dir elsewhere: no list, one-line reason", async () => {
    const other = repo();
    const ws = tmp();
    write(ws, { "a.txt": "a" });
    fs.writeFileSync(path.join(ws, ".git"), `gitdir: ${other}/.git\n`);
    expect(await dirtyFiles(ws)).toEqual({ files: [], unavailable: expect.stringMatching(/^\.git is a file .*not followed$/) });
    const linked = tmp();
    fs.symlinkSync(path.join(other, ".git"), path.join(linked, ".git"));
    expect(await dirtyFiles(linked)).toEqual({ files: [], unavailable: ".git is a symlink; it is not followed" });
    expect(await dirtyFiles(tmp())).toEqual({ files: [], unavailable: null }); // no .git: not a repository, nothing to say
  });

  it("a .git/index or .gitignore that links outside the workspace is not read (treated as absent)", async () => {
    const outside = tmp("git-state-outside-");
    write(outside, { ignore: "*\n" });
    const ws = repo();
    write(ws, { "new.txt": "n" });
    fs.rmSync(path.join(ws, ".gitignore"));
    fs.symlinkSync(path.join(outside, "ignore"), path.join(ws, ".gitignore"));
    // were the link followed, "*" would hide new.txt
    expect((await dirtyFiles(ws)).files).toEqual([".gitignore", "new.txt"]);
  });

  it("a tree over the entry cap, or a read past the deadline, gives no list and says which bound was hit", async () => {
    const ws = repo();
    write(ws, Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`many/f${i}.txt`, "x"])));
    expect(await dirtyFiles(ws, { ...GIT_STATE_LIMITS, maxEntries: 30 })).toEqual({ files: [], unavailable: "it has over 30 files and folders" });
    // the clock is the caller's: a worker thread cannot start, read and answer within 2 ms
    expect(await dirtyFiles(ws, { ...GIT_STATE_LIMITS, timeoutMs: 2 })).toEqual({ files: [], unavailable: "reading it took over 0.002 s" });
  });

  it("the confined fs refuses every write and any read through a link that leads out", async () => {
    const outside = tmp("git-state-outside-");
    write(outside, { "secret.txt": "s" });
    const ws = tmp();
    fs.symlinkSync(outside, path.join(ws, "out"));
    const c = confinedFs(ws, { maxEntries: 100, deadline: Number.POSITIVE_INFINITY, now: () => 0 });
    const p = c.client.promises;
    await expect(p.readFile(path.join(ws, "out/secret.txt"))).rejects.toMatchObject({ code: "ENOENT" });
    await expect(p.readFile(path.join(ws, "../x"))).rejects.toMatchObject({ code: "ENOENT" });
    await expect(p.readdir(path.join(ws, "out"))).rejects.toMatchObject({ code: "ENOENT" });
    await expect(p.lstat(path.join(ws, "out/secret.txt"))).rejects.toMatchObject({ code: "ENOENT" });
    expect((await p.lstat(path.join(ws, "out"))).isSymbolicLink()).toBe(true);
    await expect(p.writeFile(path.join(ws, "w.txt"), "w")).rejects.toMatchObject({ code: "EROFS" });
    await expect(p.mkdir(path.join(ws, "d"))).rejects.toMatchObject({ code: "EROFS" });
    expect(fs.readdirSync(ws)).toEqual(["out"]);
  });
});

describe("dirtyFiles: git's own index, read by stat data, off the event loop", () => {
  it("index format 4 (prefix-compressed paths, feature.manyFiles) gives git's list; before, it gave no list", async () => {
    const ws = repo({ "a.txt": "a\n", "src/deep/one.js": "1", "src/deep/two.js": "2", "src/deeper/x/three.js": "3", "z.txt": "z" });
    git(ws, "update-index", "--index-version", "4");
    expect(fs.readFileSync(path.join(ws, ".git/index")).readUInt32BE(4)).toBe(4);
    expect(await dirtyFiles(ws)).toEqual({ files: [], unavailable: null });
    write(ws, { "src/deep/two.js": "changed", "src/deeper/x/new.js": "n" });
    fs.rmSync(path.join(ws, "z.txt"));
    const d = await dirtyFiles(ws);
    expect(d).toEqual({ files: ["src/deep/two.js", "src/deeper/x/new.js", "z.txt"], unavailable: null });
    expect(d.files).toEqual(gitSays(ws));
  });

  it("a file staged and then modified again is listed once, as git lists it", async () => {
    const ws = repo();
    write(ws, { "src/x.js": "staged\n" });
    git(ws, "add", "src/x.js");
    write(ws, { "src/x.js": "staged, then changed again\n" });
    const d = await dirtyFiles(ws);
    expect(d).toEqual({ files: ["src/x.js"], unavailable: null });
    expect(d.files).toEqual(gitSays(ws));
  });

  it("regression: a racy entry (its stat data equal to the file's, written no earlier than the index) is hashed, so a same-size edit is not missed", async () => {
    const ws = repo({ "a.txt": "one\n" });
    write(ws, { "a.txt": "two\n" }); // same size: only the content tells
    // the index entry records the edited file's stat data but the old content's name: what git
    // leaves when a file is rewritten in the same timestamp tick in which the index was written
    const index = path.join(ws, ".git/index");
    const buf = fs.readFileSync(index);
    const st = fs.lstatSync(path.join(ws, "a.txt"), { bigint: true });
    const sec = (ns: bigint) => Number(ns / 1_000_000_000n);
    const nsec = (ns: bigint) => Number(ns % 1_000_000_000n);
    const fields = [sec(st.ctimeNs), nsec(st.ctimeNs), sec(st.mtimeNs), nsec(st.mtimeNs), Number(st.dev % 2n ** 32n), Number(st.ino % 2n ** 32n)];
    for (const [i, v] of fields.entries()) buf.writeUInt32BE(v, 12 + i * 4);
    buf.writeUInt32BE(Number(st.uid), 12 + 28);
    buf.writeUInt32BE(Number(st.gid), 12 + 32);
    createHash("sha1")
      .update(buf.subarray(0, buf.length - 20))
      .digest()
      .copy(buf, buf.length - 20);
    fs.writeFileSync(index, buf);
    const at = new Date(Number(st.mtimeNs / 1_000_000n));
    fs.utimesSync(index, at, at); // the index written in the same tick: racy
    expect(await dirtyFiles(ws)).toEqual({ files: ["a.txt"], unavailable: null });
    // the same entry in an index written later is trusted on its stat data, as git trusts it
    const later = new Date(Number(st.mtimeNs / 1_000_000n) + 5_000);
    fs.utimesSync(index, later, later);
    expect(await dirtyFiles(ws)).toEqual({ files: [], unavailable: null });
  });

  it("a split index, an extension git would require, a damaged index: no list, one line saying why, never a crash; an optional extension is skipped", async () => {
    const ws = repo();
    git(ws, "update-index", "--split-index");
    expect(await dirtyFiles(ws)).toEqual({ files: [], unavailable: "its index is split (core.splitIndex), which is not read here" });
    const extended = repo();
    const withExtension = (sig: string) => {
      const index = path.join(extended, ".git/index");
      const old = fs.readFileSync(index);
      const ext = Buffer.alloc(12);
      ext.write(sig, 0, "latin1");
      ext.writeUInt32BE(4, 4);
      const body = Buffer.concat([old.subarray(0, old.length - 20), ext]);
      fs.writeFileSync(index, Buffer.concat([body, createHash("sha1").update(body).digest()]));
    };
    withExtension("ZOPT"); // upper-case first letter: optional, skipped as git skips it
    expect(await dirtyFiles(extended)).toEqual({ files: [], unavailable: null });
    withExtension("zreq");
    expect(await dirtyFiles(extended)).toEqual({ files: [], unavailable: 'its index has an extension this reader does not know ("zreq")' });
    const other = repo();
    const index = path.join(other, ".git/index");
    const buf = fs.readFileSync(index);
    buf[20] = (buf[20] ?? 0) ^ 0xff;
    fs.writeFileSync(index, buf);
    expect(await dirtyFiles(other)).toEqual({ files: [], unavailable: "its index is damaged (checksum mismatch)" });
  });

  describe("a 10,000-file repository", () => {
    let big = "";
    beforeAll(() => {
      big = tmp("git-state-big-");
      const files: Record<string, string> = { ".gitignore": "*.log\ncache/\n" };
      for (let i = 0; i < 10_000; i++) files[`pkg${i % 40}/mod${Math.floor(i / 40) % 25}/f${i}.js`] = `export const v = ${i};\n`;
      write(big, files);
      git(big, "init", "-q");
      git(big, "add", "-A");
      git(big, "commit", "-qm", "init");
      write(big, { "pkg1/mod1/f41.js": "changed\n", "pkg3/new.js": "n", "x.log": "", "cache/a.js": "", "pkg2/mod0/f2.js": "staged\n" });
      git(big, "add", "pkg2/mod0/f2.js");
      fs.rmSync(path.join(big, "pkg5/mod0/f5.js"));
    }, 120_000);

    it("regression: its list (it hit the 10 s bound before) is git's, within the default bound, and the event loop stays responsive while it is read", async () => {
      const delay = monitorEventLoopDelay({ resolution: 10 });
      delay.enable();
      const d = await dirtyFiles(big);
      delay.disable();
      expect(d).toEqual({ files: gitSays(big), unavailable: null });
      expect(d.files).toEqual(["pkg1/mod1/f41.js", "pkg2/mod0/f2.js", "pkg3/new.js", "pkg5/mod0/f5.js"]);
      // generous for a loaded machine: reading it on the event loop blocked it for seconds
      expect(delay.max / 1e6).toBeLessThan(1_000);
    }, 60_000);
  });
});
