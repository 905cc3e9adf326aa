import type { Dirent } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isMiniAgentError } from "../errors.js";
import { tempRun, type TempRun } from "../tools/workspace.testkit.js";
import { captureBaseline } from "./baseline.js";
import { checkCopySize, checkLayerSize, checkExportFits, COPY_LIMITS } from "./copy-limits.js";
import { parseByteSize } from "../contracts/copy-limits.js";
import { measureTree, type TreeSizeFs } from "./tree-size.js";

let run: TempRun;
afterEach(async () => run?.cleanup());

const GIB = 1024 * 1024 * 1024;

async function refusal(p: Promise<unknown>) {
  try {
    await p;
  } catch (err) {
    if (isMiniAgentError(err)) return err;
    throw err;
  }
  throw new Error("expected a refusal");
}

describe("measureTree", () => {
  it("counts a sparse file by its length, not the blocks it uses on disk (a tar copy writes it out dense)", async () => {
    run = await tempRun({ "a.txt": "hello" });
    const fh = await fs.open(path.join(run.ws, "sparse.img"), "w");
    await fh.truncate(1.5 * GIB);
    await fh.close();
    expect((await fs.stat(path.join(run.ws, "sparse.img"))).blocks).toBeLessThan(16);
    const size = await measureTree(run.ws);
    expect(size).toMatchObject({ bytes: 1.5 * GIB + 5, files: 2 });
  });

  it("never follows a link: a symlinked folder or file outside the tree counts nothing", async () => {
    run = await tempRun({ "a.txt": "12345" });
    await fs.mkdir(path.join(run.tmp, "outside"));
    await fs.writeFile(path.join(run.tmp, "outside", "big.bin"), Buffer.alloc(1 << 20));
    await fs.symlink(path.join(run.tmp, "outside"), path.join(run.ws, "linked-dir"));
    await fs.symlink(path.join(run.tmp, "outside", "big.bin"), path.join(run.ws, "linked-file"));
    expect(await measureTree(run.ws)).toEqual({ bytes: 5, files: 1, dependencyDirs: [] });
  });

  it("leaves out what skipDir names and reports the outermost dependency folders, largest first", async () => {
    run = await tempRun({
      ".git/objects/pack.bin": "x".repeat(1000),
      "src/a.js": "a",
      "node_modules/left-pad/index.js": "x".repeat(300),
      "node_modules/left-pad/node_modules/inner/i.js": "x".repeat(100),
      "py/.venv/lib/site.py": "x".repeat(50),
    });
    const size = await measureTree(run.ws, { skipDir: (rel) => rel === ".git" });
    expect(size).toEqual({
      bytes: 451,
      files: 4,
      dependencyDirs: [
        { rel: "node_modules", bytes: 400, files: 2 },
        { rel: "py/.venv", bytes: 50, files: 1 },
      ],
    });
  });

  it("streams a folder: entries are lstat'ed in small batches as they are listed, never all collected first", async () => {
    // a 100,000-entry folder, produced lazily: the walk must start on it before the listing ends
    const N = 100_000;
    let listed = 0;
    let listedAtFirstLstat = -1;
    let inFlight = 0;
    let maxInFlight = 0;
    const fakeFs: TreeSizeFs = {
      async opendir() {
        return (async function* () {
          for (let i = 0; i < N; i++) {
            listed++;
            yield { name: `f${i}`, isDirectory: () => false, isFile: () => true } as Dirent;
          }
        })();
      },
      async lstat() {
        if (listedAtFirstLstat < 0) listedAtFirstLstat = listed;
        maxInFlight = Math.max(maxInFlight, ++inFlight);
        await Promise.resolve();
        inFlight--;
        return { size: 10, isFile: () => true, isDirectory: () => false };
      },
    };
    const size = await measureTree("/fake", { fs: fakeFs });
    expect(size).toMatchObject({ bytes: 10 * N, files: N });
    expect(listedAtFirstLstat).toBeLessThanOrEqual(64);
    expect(maxInFlight).toBeLessThanOrEqual(32);
  });
});

describe("checkCopySize", () => {
  it("refuses a tree over the byte limit in one line: the figure, the limit and why, the flag", async () => {
    run = await tempRun({ "a.txt": "x" });
    const fh = await fs.open(path.join(run.ws, "disk.img"), "w");
    await fh.truncate(200 * 1024 * 1024);
    await fh.close();
    const err = await refusal(checkCopySize(run.ws, "workspace", COPY_LIMITS));
    expect(err.code).toBe("workspace_too_large");
    expect(err.message).toBe(
      "workspace too large: 200 MiB in 2 files (limit 96 MiB: the sandbox's 128 MiB workspace less room for the tests' own writes); raise with --max-workspace-bytes",
    );
    expect(err.details).toMatchObject({ limit: "bytes", files: 2, max_bytes: COPY_LIMITS.maxBytes, flag: "--max-workspace-bytes" });
  });

  it("refuses too many files with the file limit's flag, and names a dependency folder that tips it over (a fixture's repo/ is copied whole)", async () => {
    const files: Record<string, string> = { "src/a.js": "a" };
    for (let i = 0; i < 30; i++) files[`node_modules/p${i}/index.js`] = "x";
    run = await tempRun(files);
    const err = await refusal(checkCopySize(run.ws, "fixture repo/", { maxBytes: COPY_LIMITS.maxBytes, maxFiles: 10 }));
    expect(err.message).toBe(
      "fixture repo/ has too many files: 0 MiB in 31 files (limit 10 files); raise with --max-workspace-files; of it, node_modules/ (a dependency folder) holds 0 MiB in 30 files",
    );
    expect(err.message).not.toMatch(/\n/);
    // the flag's value lets the same tree through
    await expect(checkCopySize(run.ws, "fixture repo/", { maxBytes: COPY_LIMITS.maxBytes, maxFiles: 31 })).resolves.toMatchObject({ files: 31 });
  });

  it("a workspace's own dependency folders at its root do not count: they enter sandboxes as a read-only layer with its own ceiling", async () => {
    const files: Record<string, string> = { "src/a.js": "a" };
    for (let i = 0; i < 30; i++) files[`node_modules/p${i}/index.js`] = "x";
    run = await tempRun(files);
    await expect(checkCopySize(run.ws, "workspace", { maxBytes: COPY_LIMITS.maxBytes, maxFiles: 10 })).resolves.toMatchObject({ files: 1 });
    const err = await refusal(checkLayerSize(`${run.ws}/node_modules`, "node_modules", { maxBytes: COPY_LIMITS.maxBytes, maxFiles: 10 }));
    expect(err.message).toMatch(/^dependency folder node_modules\/ too large for its read-only layer: 0 MiB in 30 files \(limit 10 files;/);
  });

  it("does not count repository metadata (.git is never copied into a sandbox)", async () => {
    run = await tempRun({ ".git/objects/x": "x".repeat(5000), "a.txt": "abc" });
    await expect(checkCopySize(run.ws, "workspace", { maxBytes: 10, maxFiles: 5 })).resolves.toMatchObject({ bytes: 3, files: 1 });
  });
});

describe("checkExportFits", () => {
  const file = (size: number) => ({ type: "file" as const, stat: { size: BigInt(size) } });
  it("counts whole tmpfs pages per file: many small files can fill /workspace though their bytes are few", () => {
    expect(() => checkExportFits([file(10), file(10)], 8192)).not.toThrow();
    let err: unknown;
    try {
      checkExportFits([file(10), file(10), file(10)], 8192);
    } catch (e) {
      err = e;
    }
    expect(isMiniAgentError(err, "workspace_too_large")).toBe(true);
    expect((err as Error).message).toMatch(/^workspace too large for the sandbox: 0 MiB in 3 files take 0 MiB of its 0 MiB \/workspace/);
  });
});

describe("parseByteSize", () => {
  it("takes bytes or a binary unit, and nothing else", () => {
    expect([parseByteSize("1000"), parseByteSize("200M"), parseByteSize("1GiB"), parseByteSize("64k")]).toEqual([1000, 200 * 1024 * 1024, GIB, 65536]);
    expect([parseByteSize("0"), parseByteSize("-1"), parseByteSize("1e9"), parseByteSize("2T"), parseByteSize("")]).toEqual([null, null, null, null, null]);
  });
});

describe("captureBaseline", () => {
  it("streams each file into the baseline: the copy's hash is of the bytes written, for a file larger than one read", async () => {
    const big = Buffer.alloc(3 * 256 * 1024 + 17, 7);
    run = await tempRun({ "a.txt": "a" });
    await fs.writeFile(path.join(run.ws, "big.bin"), big);
    const b = await captureBaseline(run.ws, run.ctx.controlDir);
    expect((await b.readFile("big.bin"))?.equals(big)).toBe(true);
  });
});
