import fs from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { classify } from "../policy/classify.js";
import { validateToolCall } from "./validate.js";
import { listFilesTool } from "./list-files.js";
import { tempRun, type TempRun } from "./workspace.testkit.js";

let run: TempRun;
afterEach(async () => run?.cleanup());

const pathsOf = (data: unknown) => (data as { files: { path: string }[] }).files.map((f) => f.path);

describe("list_files", () => {
  it("lists files under a folder, sorted, with sizes", async () => {
    run = await tempRun({ "src/b.js": "bb", "src/a.js": "a", "src/lib/c.js": "ccc", "README.md": "r" });
    const r = await listFilesTool("c1", { path: "src" }, run.ctx);
    expect(r).toMatchObject({ ok: true, truncated: false });
    expect(r.data).toMatchObject({
      path: "src",
      total: 3,
      truncated: false,
      files: [
        { path: "src/a.js", size: 1 },
        { path: "src/b.js", size: 2 },
        { path: "src/lib/c.js", size: 3 },
      ],
    });
    expect(pathsOf((await listFilesTool("c2", {}, run.ctx)).data)).toEqual(["README.md", "src/a.js", "src/b.js", "src/lib/c.js"]);
  });

  it("honours .gitignore at every level, the deeper file winning, and .git/info/exclude", async () => {
    run = await tempRun({
      ".gitignore": "build/\n*.log\n/local.txt\n",
      "build/out.js": "x",
      "app.log": "x",
      "local.txt": "x",
      "sub/local.txt": "kept: the root's pattern is anchored",
      "sub/.gitignore": "!keep.log\ngenerated.*\n",
      "sub/keep.log": "re-included by the deeper file",
      "sub/drop.log": "x",
      "sub/generated.py": "x",
      "other/generated.py": "kept: the pattern is sub's only",
      "secret-notes.md": "x",
    });
    await fs.mkdir(path.join(run.ws, ".git", "info"), { recursive: true });
    await fs.writeFile(path.join(run.ws, ".git", "info", "exclude"), "secret-notes.md\n");
    const r = await listFilesTool("c1", {}, run.ctx);
    expect(pathsOf(r.data)).toEqual([".gitignore", "other/generated.py", "sub/.gitignore", "sub/keep.log", "sub/local.txt"]);
    expect(r.data).toMatchObject({ gitignored: 6 });
  });

  it("never lists a forbidden file, not even by name, nor anything under .git", async () => {
    run = await tempRun(
      { ".env": "PASSWORD=x", "config/.env.local": "x", "keys/id_rsa": "x", "src/a.js": "a", "private/notes.txt": "x", ".git/config": "x" },
      {
        schema_version: 1,
        name: "t",
        task: "x",
        writable: ["src/**"],
        forbidden: ["private/**"],
        test_presets: { u: { command: ["node"] } },
        verify_preset: "u",
      },
    );
    const r = await listFilesTool("c1", {}, run.ctx);
    expect(pathsOf(r.data)).toEqual(["src/a.js"]);
    expect(JSON.stringify(r)).not.toMatch(/\.env|id_rsa|notes|config/);
    const denied = await listFilesTool("c2", { path: "private" }, run.ctx);
    expect(denied).toMatchObject({ ok: false, error: { code: "path_denied" } });
  });

  it("does not follow symlinks: a link to a folder outside the workspace lists nothing of it (regression guard: symlink escape)", async () => {
    run = await tempRun({ "src/a.js": "a" });
    const outside = path.join(run.tmp, "outside");
    await fs.mkdir(outside);
    await fs.writeFile(path.join(outside, "host-secret.txt"), "x");
    await fs.symlink(outside, path.join(run.ws, "src", "escape"));
    await fs.symlink(path.join(outside, "host-secret.txt"), path.join(run.ws, "link.txt"));
    const r = await listFilesTool("c1", {}, run.ctx);
    expect(pathsOf(r.data)).toEqual(["src/a.js"]);
    expect(r.data).toMatchObject({ links_not_followed: 2 });
    expect(await listFilesTool("c2", { path: "src/escape" }, run.ctx)).toMatchObject({ ok: false, error: { code: "path_denied" } });
  });

  it("filters by a glob relative to the folder, and cuts at the limit with truncated and the total", async () => {
    run = await tempRun(Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`pkg/m${String(i).padStart(2, "0")}.py`, "x"])));
    await fs.writeFile(path.join(run.ws, "pkg", "notes.md"), "x");
    const r = await listFilesTool("c1", { path: "pkg", glob: "*.py", limit: 5 }, run.ctx);
    expect(r).toMatchObject({ ok: true, truncated: true });
    expect(r.data).toMatchObject({ total: 30, truncated: true, glob: "*.py" });
    expect(pathsOf(r.data)).toEqual(["pkg/m00.py", "pkg/m01.py", "pkg/m02.py", "pkg/m03.py", "pkg/m04.py"]);
    // the byte cap cuts too, so a huge tree never floods the model's context
    const capped = await listFilesTool("c2", { limit: 2000 }, { ...run.ctx, limits: { listMaxResultBytes: 100 } });
    expect(capped.truncated).toBe(true);
    expect(pathsOf(capped.data).length).toBeLessThan(31);
  });

  it("refuses a file, a missing folder and a path outside the workspace with clear codes", async () => {
    run = await tempRun({ "src/a.js": "a" });
    expect(await listFilesTool("c1", { path: "src/a.js" }, run.ctx)).toMatchObject({ ok: false, error: { code: "invalid_fields" } });
    expect(await listFilesTool("c2", { path: "nope" }, run.ctx)).toMatchObject({ ok: false, error: { code: "not_found" } });
    expect(await listFilesTool("c3", { path: "../x" }, run.ctx)).toMatchObject({ ok: false, error: { code: "path_denied" } });
    expect(validateToolCall({ call_id: "c4", name: "list_files", arguments: { limit: 0 } })).toMatchObject({ ok: false });
    expect(validateToolCall({ call_id: "c5", name: "list_files", arguments: { recursive: true } })).toMatchObject({ ok: false });
  });

  it("is a read: allowed by policy, except on a forbidden folder", () => {
    const task = { ...run.ctx.task };
    expect(classify("list_files", {}, task).verdict).toBe("allow");
    expect(classify("list_files", { path: "src" }, task).verdict).toBe("allow");
    expect(classify("list_files", { path: ".git" }, task)).toMatchObject({ verdict: "deny", code: "path_denied" });
  });
});
