import fs from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isMiniAgentError } from "../errors.js";
import { tempRun, type TempRun } from "../tools/workspace.testkit.js";
import { captureBaseline, loadBaseline } from "./baseline.js";
import { changedPaths, computeManifest } from "./manifest.js";
import { sha256Hex } from "./hash.js";
import { walkEntries, walkTree } from "./walk.js";

let run: TempRun;
afterEach(async () => run?.cleanup());

describe("walkEntries: the walk streamed, for the manifest, the baseline and the listing", () => {
  it("yields walkTree's order (sorted relative paths: `a-c` before `a/b`) one entry at a time, before the tree is read whole", async () => {
    run = await tempRun({ "a/b.txt": "1", "a-c.txt": "2", "a.d/e.txt": "3", "a b.txt": "4", "z/y/x.txt": "5", "z/y-.txt": "6" });
    const streamed: string[] = [];
    const it = walkEntries(run.ws)[Symbol.asyncIterator]();
    const first = await it.next();
    // the first entry is handed over while the folders after it are still unread
    await fs.writeFile(path.join(run.ws, "z/late.txt"), "7");
    streamed.push((first.value as { rel: string }).rel);
    for (let r = await it.next(); !r.done; r = await it.next()) streamed.push(r.value.rel);
    const sorted = [...streamed].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    expect(streamed).toEqual(sorted);
    expect(streamed).toContain("z/late.txt");
    expect((await walkTree(run.ws)).map((e) => e.rel)).toEqual(streamed);
  });
});

describe("computeManifest", () => {
  it("hashes every file, sorted, and the digest follows any content change", async () => {
    run = await tempRun({ "b.txt": "b", "a/x.js": "x", ".git/HEAD": "ref" });
    const m1 = await computeManifest(run.ws);
    expect(Object.keys(m1.files)).toEqual([".git/HEAD", "a/x.js", "b.txt"]);
    expect(m1.files["b.txt"]).toBe(sha256Hex("b"));
    expect((await computeManifest(run.ws)).digest).toBe(m1.digest);
    await fs.writeFile(path.join(run.ws, "b.txt"), "B");
    const m2 = await computeManifest(run.ws);
    expect(m2.digest).not.toBe(m1.digest);
    expect(changedPaths(m1, m2)).toEqual(["b.txt"]);
  });

  it("records a symlink without following it (its target's content is never read)", async () => {
    run = await tempRun({ "a.txt": "a" });
    await fs.writeFile(path.join(run.tmp, "outside"), "secret");
    const before = await computeManifest(run.ws);
    await fs.symlink(path.join(run.tmp, "outside"), path.join(run.ws, "link"));
    const after = await computeManifest(run.ws);
    expect(after.files.link).toBeUndefined();
    expect(after.special.link).toMatch(/^symlink:[0-9a-f]{64}$/);
    expect(after.digest).not.toBe(before.digest);
  });

  // root reads any folder regardless of its mode, so the fault exists only for other users
  it.skipIf(process.getuid?.() === 0)("a folder that cannot be listed is recorded, not silently treated as empty", async () => {
    run = await tempRun({ "a.txt": "a", "locked/x.txt": "x" });
    await fs.chmod(path.join(run.ws, "locked"), 0o000);
    try {
      const m = await computeManifest(run.ws);
      expect(m.special.locked).toBe("unreadable:dir");
    } finally {
      await fs.chmod(path.join(run.ws, "locked"), 0o755);
    }
  });

  it("leaves out an excluded folder (a control dir inside the root)", async () => {
    run = await tempRun({ "a.txt": "a", "ctl/x": "1" });
    const m = await computeManifest(run.ws, { excludeAbs: [path.join(run.ws, "ctl")] });
    expect(Object.keys(m.files)).toEqual(["a.txt"]);
  });
});

describe("baseline", () => {
  it("copies every file into the control dir and loads it back hash-checked", async () => {
    run = await tempRun({ "src/a.js": "one", "notes.txt": "mine" });
    const b = await captureBaseline(run.ws, run.ctl);
    await fs.writeFile(path.join(run.ws, "src/a.js"), "two");
    await fs.rm(path.join(run.ws, "notes.txt"));
    const loaded = await loadBaseline(run.ctl);
    expect(loaded.manifest).toEqual(b.manifest);
    expect((await loaded.readFile("src/a.js"))?.toString()).toBe("one");
    expect((await loaded.readFile("notes.txt"))?.toString()).toBe("mine");
    expect(await loaded.readFile("never.txt")).toBeNull();
  });

  it("regression: the baseline copy had no links, so a suite's linked fixtures failed on the baseline and read as fixed by the run; links that name a place inside the workspace are now in the copy", async () => {
    run = await tempRun({ "tests/fixtures/pm": "#!/bin/sh\n", "tests/fixtures/other-dir/.keep": "", "secret.txt": "s" });
    const ws = await fs.realpath(run.ws);
    await fs.symlink("./pm", path.join(run.ws, "tests/fixtures/pmlink"));
    await fs.symlink("../pm", path.join(run.ws, "tests/fixtures/other-dir/pm"));
    await fs.symlink(path.join(ws, "tests/fixtures/pm"), path.join(run.ws, "tests/abs-inside"));
    await fs.symlink("/etc/passwd", path.join(run.ws, "abs-outside"));
    await fs.symlink("../../elsewhere", path.join(run.ws, "tests/up-outside"));
    const b = await captureBaseline(run.ws, run.ctl);
    const files = path.join(run.ctl, "baseline/files");
    expect(await fs.readlink(path.join(files, "tests/fixtures/pmlink"))).toBe("./pm");
    expect(await fs.readlink(path.join(files, "tests/fixtures/other-dir/pm"))).toBe("../pm");
    // an absolute target inside the workspace would name the live workspace from the copy: made relative
    expect(await fs.readlink(path.join(files, "tests/abs-inside"))).toBe("fixtures/pm");
    // what points outside is never made in the state dir (the export rule leaves it out of every sandbox anyway)
    for (const outside of ["abs-outside", "tests/up-outside"]) await expect(fs.lstat(path.join(files, outside))).rejects.toThrow(/ENOENT/);
    // the manifest still records every link by its target, as before
    expect(Object.keys(b.manifest.special).sort()).toEqual([
      "abs-outside",
      "tests/abs-inside",
      "tests/fixtures/other-dir/pm",
      "tests/fixtures/pmlink",
      "tests/up-outside",
    ]);
  });

  it("copyFileTo streams a file's baseline bytes to a new file, checked against the manifest; an altered copy is refused and leaves nothing", async () => {
    // 24 MiB: read in pieces, never as one buffer (capture copied each file with readFile/writeFile)
    const big = Buffer.alloc(24 << 20, 7);
    run = await tempRun({ "small.txt": "s" });
    await fs.writeFile(path.join(run.ws, "big.bin"), big);
    await captureBaseline(run.ws, run.ctl);
    const loaded = await loadBaseline(run.ctl);
    const out = path.join(run.ctl, "out");
    await fs.mkdir(out);
    expect(await loaded.copyFileTo("big.bin", path.join(out, "big.bin"), 0o644)).toBe(true);
    expect(sha256Hex(await fs.readFile(path.join(out, "big.bin")))).toBe(sha256Hex(big));
    expect(await loaded.copyFileTo("never.txt", path.join(out, "never.txt"), 0o644)).toBe(false);
    await fs.writeFile(path.join(run.ctl, "baseline/files/small.txt"), "forged");
    await expect(loaded.copyFileTo("small.txt", path.join(out, "small.txt"), 0o644)).rejects.toSatisfy((e) => isMiniAgentError(e, "internal"));
    await expect(fs.stat(path.join(out, "small.txt"))).rejects.toThrow();
  });

  it("refuses a control dir inside the workspace", async () => {
    run = await tempRun({ "a.txt": "a" });
    await expect(captureBaseline(run.ws, path.join(run.ws, ".state"))).rejects.toSatisfy((e) => isMiniAgentError(e, "invalid_request"));
    await expect(fs.stat(path.join(run.ws, ".state"))).rejects.toThrow();
  });

  it("refuses to overwrite a captured baseline (resume reuses the run-start snapshot)", async () => {
    run = await tempRun({ "a.txt": "a" });
    await captureBaseline(run.ws, run.ctl);
    await fs.writeFile(path.join(run.ws, "a.txt"), "changed");
    await expect(captureBaseline(run.ws, run.ctl)).rejects.toSatisfy((e) => isMiniAgentError(e, "invalid_request"));
    expect((await (await loadBaseline(run.ctl)).readFile("a.txt"))?.toString()).toBe("a");
  });

  it("detects an altered baseline copy instead of diffing against it", async () => {
    run = await tempRun({ "a.txt": "a" });
    await captureBaseline(run.ws, run.ctl);
    await fs.writeFile(path.join(run.ctl, "baseline/files/a.txt"), "forged");
    const loaded = await loadBaseline(run.ctl);
    await expect(loaded.readFile("a.txt")).rejects.toSatisfy((e) => isMiniAgentError(e, "internal"));
  });

  it("refuses a baseline manifest with an unknown schema_version instead of reinterpreting it", async () => {
    run = await tempRun({ "a.txt": "a" });
    await captureBaseline(run.ws, run.ctl);
    const file = path.join(run.ctl, "baseline/manifest.json");
    const m = JSON.parse(await fs.readFile(file, "utf8"));
    await fs.writeFile(file, JSON.stringify({ ...m, schema_version: 2 }));
    await expect(loadBaseline(run.ctl)).rejects.toSatisfy((e) => isMiniAgentError(e, "schema_version_unsupported"));
  });

  it("refuses a manifest whose digest does not match its entries", async () => {
    run = await tempRun({ "a.txt": "a" });
    await captureBaseline(run.ws, run.ctl);
    const file = path.join(run.ctl, "baseline/manifest.json");
    const m = JSON.parse(await fs.readFile(file, "utf8"));
    m.files["a.txt"] = sha256Hex("other");
    await fs.writeFile(file, JSON.stringify(m));
    await expect(loadBaseline(run.ctl)).rejects.toSatisfy((e) => isMiniAgentError(e));
  });
});
