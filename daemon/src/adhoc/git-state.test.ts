import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { confinedFs } from "./confined-fs.js";
import { dirtyFiles, GIT_STATE_LIMITS } from "./git-state.js";

/**
 * The dirty-worktree reader: git's on-disk format read as data. Repositories
 * are made with the real git (the test's own, with no user config) so the
 * index and objects are exactly what a user's checkout holds.
 */
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
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
  execFileSync("git", ["-c", "user.email=t@t", "-c", "user.name=t", ...args], {
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

  it("index format 2 and 3 (intent-to-add) give git's list; format 4 gives no list and says why", async () => {
    const ws = repo();
    write(ws, { "src/x.js": "changed\n", "later.txt": "l" });
    git(ws, "update-index", "--index-version", "3");
    git(ws, "add", "-N", "later.txt");
    expect((await dirtyFiles(ws)).files).toEqual(["later.txt", "src/x.js"]);
    expect(gitSays(ws)).toEqual(["later.txt", "src/x.js"]);
    git(ws, "update-index", "--index-version", "4");
    expect(await dirtyFiles(ws)).toEqual({ files: [], unavailable: expect.stringMatching(/format 4/) });
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
    let t = 0;
    const clock = () => (t += 1_000); // every look at the clock: one more second
    expect(await dirtyFiles(ws, { timeoutMs: 5_000, maxEntries: 1_000_000, now: clock })).toEqual({ files: [], unavailable: "reading it took over 5 s" });
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
