import fs from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { captureBaseline } from "../workspace/baseline.js";
import { sha256Hex } from "../workspace/hash.js";
import { commitPreparedAction, prepareApplyPatch } from "./apply-patch.js";
import { CORPUS_SECRETS, CREDENTIAL_CORPUS } from "../redact/credential-corpus.testkit.js";
import { listFilesTool } from "./list-files.js";
import { readFileTool } from "./read-file.js";
import { searchTool } from "./search.js";
import { showDiffTool } from "./show-diff.js";
import { tempRun, type TempRun } from "./workspace.testkit.js";

let run: TempRun;
afterEach(async () => run?.cleanup());

const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join("\n") + "\n";

describe("read_file", () => {
  it("returns text, SHA-256 version, total lines and the returned range", async () => {
    run = await tempRun({ "src/a.js": lines(10) });
    const r = await readFileTool("c1", { path: "src/a.js", start: 3, end: 4 }, run.ctx);
    expect(r).toMatchObject({
      ok: true,
      truncated: false,
      data: { path: "src/a.js", version: sha256Hex(lines(10)), total_lines: 10, start: 3, end: 4, text: "line 3\nline 4\n" },
    });
  });

  it("keeps complete lines under the byte cap and says where it stopped", async () => {
    run = await tempRun({ "src/a.js": lines(100) });
    const r = await readFileTool("c1", { path: "src/a.js" }, { ...run.ctx, limits: { readMaxReturnBytes: 30 } });
    expect(r.truncated).toBe(true);
    expect(r.data).toMatchObject({ start: 1, end: 4, text: "line 1\nline 2\nline 3\nline 4\n", truncated: true });
  });

  it("keeps a missing final newline so `old` can be copied verbatim", async () => {
    run = await tempRun({ "a.txt": "one\ntwo" });
    const r = await readFileTool("c1", { path: "a.txt" }, run.ctx);
    expect(r.data).toMatchObject({ total_lines: 2, text: "one\ntwo" });
  });

  it.each([
    ["../outside", "path_denied"],
    [".env", "path_denied"],
    ["missing.js", "not_found"],
    ["src", "path_denied"],
  ])("%s -> %s", async (p, code) => {
    run = await tempRun({ "src/a.js": "x", ".env": "KEY=1" });
    expect(await readFileTool("c1", { path: p }, run.ctx)).toMatchObject({ ok: false, error: { code } });
  });

  it("refuses non-UTF-8 bytes and oversized files", async () => {
    run = await tempRun({ "bin.dat": Buffer.from([0xff, 0xfe, 0x00, 0x80]), "big.txt": "x".repeat(2000) });
    expect(await readFileTool("c1", { path: "bin.dat" }, run.ctx)).toMatchObject({ ok: false, error: { code: "path_denied" } });
    expect(await readFileTool("c1", { path: "big.txt" }, { ...run.ctx, limits: { readMaxFileBytes: 1000 } })).toMatchObject({
      ok: false,
      error: { code: "too_large" },
    });
  });

  it("start past the end -> invalid_fields", async () => {
    run = await tempRun({ "a.txt": lines(3) });
    expect(await readFileTool("c1", { path: "a.txt", start: 9 }, run.ctx)).toMatchObject({ ok: false, error: { code: "invalid_fields" } });
  });
});

describe("search", () => {
  it("finds literal text with path, line and snippet, skipping forbidden and non-UTF-8 files and saying so", async () => {
    run = await tempRun({
      "src/a.js": "const needle = 1;\nother\nneedle again\n",
      "docs/b.md": "no hit\n",
      ".env": "needle=secret",
      ".git/config": "needle",
      "blob.bin": Buffer.concat([Buffer.from("needle"), Buffer.from([0xff, 0xfe])]),
    });
    const r = await searchTool("c1", { query: "needle" }, run.ctx);
    expect(r.ok).toBe(true);
    expect(r.data).toMatchObject({
      hits: [
        { path: "src/a.js", line: 1, snippet: "const needle = 1;" },
        { path: "src/a.js", line: 3, snippet: "needle again" },
      ],
      truncated: false,
      skipped_non_utf8: ["blob.bin"],
      skipped_non_utf8_count: 1,
    });
  });

  it("does not follow a symlink out of the workspace", async () => {
    run = await tempRun({ "src/a.js": "x" });
    await fs.mkdir(path.join(run.tmp, "outside"));
    await fs.writeFile(path.join(run.tmp, "outside/secret.txt"), "needle");
    await fs.symlink(path.join(run.tmp, "outside"), path.join(run.ws, "src/out"));
    const r = await searchTool("c1", { query: "needle" }, run.ctx);
    expect(r.data).toMatchObject({ hits: [] });
  });

  it("keeps complete hits up to the byte cap and sets truncated", async () => {
    run = await tempRun({ "a.txt": "hit\n".repeat(200) });
    const r = await searchTool("c1", { query: "hit" }, { ...run.ctx, limits: { searchMaxResultBytes: 256 } });
    expect(r.truncated).toBe(true);
    const data = r.data as { hits: unknown[] };
    expect(data.hits.length).toBeGreaterThan(0);
    expect(Buffer.byteLength(JSON.stringify(data.hits))).toBeLessThanOrEqual(256 + data.hits.length + 2);
  });

  it("'.' means the whole workspace", async () => {
    run = await tempRun({ "src/a.js": "k", "docs/b.md": "k" });
    for (const p of [".", "./"]) {
      expect((await searchTool("c1", { query: "k", path: p }, run.ctx)).data).toMatchObject({ hits: [{ path: "docs/b.md" }, { path: "src/a.js" }] });
    }
  });

  it("restricts to a folder and refuses a forbidden one", async () => {
    run = await tempRun({ "src/a.js": "k", "docs/b.md": "k" });
    expect((await searchTool("c1", { query: "k", path: "docs" }, run.ctx)).data).toMatchObject({ hits: [{ path: "docs/b.md", line: 1 }] });
    expect(await searchTool("c1", { query: "k", path: ".git" }, run.ctx)).toMatchObject({ ok: false, error: { code: "path_denied" } });
  });
});

describe("credential files: listing, read_file, search", () => {
  it("regression: .git-credentials, .pgpass, .yarnrc.yml, credentials.json, gh hosts.yml, *.tfstate, .vault-token, cargo and maven credentials, kubeconfig*, .htpasswd, *.jks, *.asc, ssh_host_*_key were listed, read and searched", async () => {
    const files: Record<string, string> = { "src/a.js": "export const a = 1;\n" };
    for (const f of CREDENTIAL_CORPUS) files[f.path] = f.content;
    run = await tempRun(files);
    const listed = JSON.stringify(await listFilesTool("c0", { path: "." }, run.ctx));
    expect(listed).toContain("src/a.js");
    expect(CREDENTIAL_CORPUS.map((f) => f.path).filter((p) => listed.includes(p))).toEqual([]);
    for (const f of CREDENTIAL_CORPUS) {
      const r = await readFileTool("c1", { path: f.path }, run.ctx);
      expect({ path: f.path, ok: r.ok, code: r.error?.code }).toEqual({ path: f.path, ok: false, code: "path_denied" });
    }
    for (const value of CORPUS_SECRETS) {
      const r = await searchTool("c2", { query: value.slice(0, 12) }, run.ctx);
      expect({ value, hits: (r.data as { hits: unknown[] }).hits }).toEqual({ value, hits: [] });
    }
  });
});

describe("show_diff", () => {
  it("diffs against the baseline captured in the control dir", async () => {
    run = await tempRun({ "src/a.js": "one\n", "old.txt": "bye\n" });
    await captureBaseline(run.ws, run.ctl);
    const p = await prepareApplyPatch("c1", { path: "src/a.js", version: sha256Hex("one\n"), old: "one", new: "two" }, run.ctx, "run_t");
    if (!p.ok) throw new Error("prepare failed");
    await commitPreparedAction(p.action, run.ctx);
    await fs.rm(path.join(run.ws, "old.txt"));
    await fs.writeFile(path.join(run.ws, ".env"), "TOKEN=x");
    const r = await showDiffTool("c2", run.ctx);
    expect(r.ok).toBe(true);
    const d = r.data as { diff: string; files: unknown[] };
    expect(d.files).toEqual([
      { path: ".env", status: "added" },
      { path: "old.txt", status: "deleted" },
      { path: "src/a.js", status: "modified" },
    ]);
    expect(d.diff).toContain("--- a/src/a.js\n+++ b/src/a.js");
    expect(d.diff).toContain("-one\n+two");
    expect(d.diff).toContain("-bye");
    expect(d.diff).toContain(".env (forbidden path; content withheld)");
    expect(d.diff).not.toContain("TOKEN");
  });

  it("without a baseline -> a clear error, not a crash", async () => {
    run = await tempRun({ "a.txt": "a" });
    expect(await showDiffTool("c1", run.ctx)).toMatchObject({ ok: false, error: { code: "not_found" } });
  });
});
