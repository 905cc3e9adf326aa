import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadCase } from "../../eval/src/case-load.js";
import { evalMain } from "../../eval/src/cli.js";
import type { EvalIO } from "../../eval/src/command.js";
import { F2P, INSTANCE_ID, makeSweBenchFixture, P2P, type SweBenchFixture, writeJsonl } from "../kit/swebench-instance.js";

/**
 * `eval import --swebench` without a daemon or an engine: a SWE-bench-format
 * instance of our own (tests/kit/swebench-instance.ts) imported into a case
 * folder that `eval run`'s loader accepts, and each way an instance or its
 * repository is refused. tests/e2e/swebench.test.ts runs the imported case.
 */
let root: string;
let fx: SweBenchFixture;
beforeAll(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), "ma-swebench-import-"));
  fx = makeSweBenchFixture(root);
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

function io(): EvalIO & { stdout: () => string; stderr: () => string } {
  const out: string[] = [];
  const err: string[] = [];
  return {
    env: {},
    cwd: root,
    stderrIsTTY: false,
    stdoutIsTTY: false,
    clock: { now: () => Date.now(), every: () => () => {} },
    out: (s) => void out.push(s),
    err: (s) => void err.push(s),
    stdout: () => out.join(""),
    stderr: () => err.join(""),
  };
}

let n = 0;
async function importLines(lines: (Record<string, unknown> | string)[], repos = fx.reposDir) {
  const dir = path.join(root, `try-${++n}`);
  fs.mkdirSync(dir);
  const file = writeJsonl(path.join(dir, "instances.jsonl"), lines);
  const i = io();
  const code = await evalMain("eval", ["import", "--swebench", file, "--repos", repos], i);
  return { code, out: i.stdout(), err: i.stderr(), casesDir: path.join(dir, "instances") };
}

const files = (dir: string): string[] =>
  fs.existsSync(dir)
    ? fs
        .readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
        .sort()
    : [];

describe("eval import --swebench: an instance becomes a case eval run accepts", () => {
  it("writes repo/ at base_commit, the test_patch's files as hidden tests only, the lists and the detected preset, the gold patch as a replay", async () => {
    const r = await importLines([fx.line]);
    expect({ code: r.code, err: r.err }).toEqual({ code: 0, err: "" });
    expect(r.out).toContain(`line 1: ${INSTANCE_ID}: imported as`);
    expect(r.out).toContain("imported 1 of 1 instance(s)");
    const dir = path.join(r.casesDir, INSTANCE_ID);
    // the base tree only: the later commit's README.md is not there, and no .git
    expect(files(dir)).toEqual([
      "control/hidden_tests/tests/test_calc.py",
      "expect.json",
      "replay.json",
      "repo/calc.py",
      "repo/conftest.py",
      "repo/tests/test_calc.py",
      "task.json",
    ]);
    // the new test is in the hidden copy, never in the workspace's
    expect(fs.readFileSync(path.join(dir, "control/hidden_tests/tests/test_calc.py"), "utf8")).toContain("def test_divide_exact");
    expect(fs.readFileSync(path.join(dir, "repo/tests/test_calc.py"), "utf8")).not.toContain("test_divide_exact");
    const loaded = await loadCase(dir);
    expect(loaded.task).toMatchObject({
      FAIL_TO_PASS: [F2P],
      PASS_TO_PASS: [P2P],
      hidden_tests: "hidden_tests",
      image_family: "python",
      verify_preset: "tests",
      test_presets: { tests: { parser: "junit_xml" } },
    });
    const writes = loaded.replay.decisions.filter((d) => d.kind === "tool");
    expect(writes).toEqual([
      {
        kind: "tool",
        call: expect.objectContaining({
          name: "apply_patch",
          arguments: expect.objectContaining({ path: "calc.py", old: "    return a // b\n", new: "    return a / b\n" }),
        }),
      },
    ]);
    expect(loaded.expect).toMatchObject({ status: "completed" });
  });

  it("accepts the lists as arrays too, and ignores fields it does not use", async () => {
    const r = await importLines([{ ...fx.line, FAIL_TO_PASS: [F2P], PASS_TO_PASS: [], created_at: "2024-01-01", environment_setup_commit: "x" }]);
    expect(r.code).toBe(0);
    expect((await loadCase(path.join(r.casesDir, INSTANCE_ID))).task.PASS_TO_PASS).toEqual([]);
  });

  it("a malformed line, a missing repository and an absent base_commit are each reported by line number and skipped; the good one is imported", async () => {
    const r = await importLines([
      "{not json",
      { ...fx.line, instance_id: "no-repo-1", repo: "acme/nowhere" },
      { ...fx.line, instance_id: "no-commit-1", base_commit: "0".repeat(40) },
      { ...fx.line, FAIL_TO_PASS: "[not json" },
      fx.line,
    ]);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^line 1: skipped: not valid JSON/m);
    expect(r.out).toMatch(
      /^line 2: no-repo-1 \(no-repo-1\): skipped: no repository for acme\/nowhere; tried .*acme__nowhere \(absent\), .*acme\/nowhere \(absent\), .*nowhere \(absent\)$/m,
    );
    expect(r.out).toMatch(new RegExp(`^line 3: no-commit-1 \\(no-commit-1\\): skipped: base_commit ${"0".repeat(40)} is not in `, "m"));
    expect(r.out).toMatch(/^line 4: skipped: .*FAIL_TO_PASS.*not JSON/m);
    expect(r.out).toMatch(/^imported 1 of 5 instance\(s\) into .*; 4 skipped$/m);
    // nothing half-written for the refused ones
    expect(fs.readdirSync(r.casesDir)).toEqual([INSTANCE_ID]);
  });

  it("a test_patch that deletes a file, and a gold patch whose hunk does not apply, refuse that instance clearly", async () => {
    const deleting = `diff --git a/conftest.py b/conftest.py\ndeleted file mode 100644\n--- a/conftest.py\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-import sys, os\n-sys.path.insert(0, os.path.dirname(__file__))\n`;
    const stale = String(fx.line.patch).replace("return a // b", "return a %% b");
    const r = await importLines([
      { ...fx.line, instance_id: "deletes-1", test_patch: deleting },
      { ...fx.line, instance_id: "stale-1", patch: stale },
    ]);
    expect(r.code).toBe(1);
    expect(r.out).toContain("deletes-1 (deletes-1): skipped: test_patch deletes conftest.py; hidden tests can add or change files, never delete one");
    expect(r.out).toContain("stale-1 (stale-1): skipped: patch: a hunk does not apply to calc.py at the base commit");
    // nothing imported: no folder left to refuse the next try
    expect(fs.existsSync(r.casesDir)).toBe(false);
  });
});

describe("eval import --swebench: a hostile repos folder", () => {
  it("refuses a repository folder that is a symlink to elsewhere (never followed), naming it", async () => {
    const repos = path.join(root, "hostile-link");
    fs.mkdirSync(repos);
    fs.symlinkSync(fx.repoDir, path.join(repos, "acme__calc"));
    const r = await importLines([fx.line], repos);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/skipped: .*acme__calc is a symlink or lies under one; a repository is never read through a link/);
  });

  it("refuses a repository whose .git is a file naming a git directory elsewhere", async () => {
    const repos = path.join(root, "hostile-gitfile");
    fs.mkdirSync(path.join(repos, "acme__calc"), { recursive: true });
    fs.writeFileSync(path.join(repos, "acme__calc", ".git"), `gitdir: ${path.join(fx.repoDir, ".git")}\n`);
    const r = await importLines([fx.line], repos);
    expect(r.out).toMatch(/\.git is not a folder \(a file naming a git directory elsewhere\); it is not followed/);
  });

  it("regression: a repository's own config never runs (no git program runs on the host): an fsmonitor hook that would write a file does not", async () => {
    const repos = path.join(root, "hostile-config");
    fs.mkdirSync(repos);
    fs.cpSync(fx.repoDir, path.join(repos, "acme__calc"), { recursive: true });
    const marker = path.join(root, "hook-ran");
    const config = path.join(repos, "acme__calc", ".git", "config");
    fs.appendFileSync(config, `[core]\n\tfsmonitor = touch ${marker}\n[filter "x"]\n\tsmudge = touch ${marker}\n`);
    fs.writeFileSync(path.join(repos, "acme__calc", ".gitattributes"), "* filter=x\n");
    const r = await importLines([fx.line], repos);
    expect(r.code).toBe(0);
    expect(fs.existsSync(marker)).toBe(false);
  });

  it("an object store that links out of the repository (alternates) is read confined: the objects out there are not found", async () => {
    const repos = path.join(root, "hostile-alternates");
    const repo = path.join(repos, "acme__calc");
    fs.mkdirSync(repo, { recursive: true });
    execFileSync("git", ["init", "-q", repo], { env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" } });
    fs.mkdirSync(path.join(repo, ".git", "objects", "info"), { recursive: true });
    fs.writeFileSync(path.join(repo, ".git", "objects", "info", "alternates"), `${path.join(fx.repoDir, ".git", "objects")}\n`);
    const r = await importLines([fx.line], repos);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/skipped: base_commit [0-9a-f]{40} is not in /);
  });
});

describe("eval import: its grammar (bad input is a usage error that changes nothing)", () => {
  it.each([
    [["import"], "--swebench FILE.jsonl is required"],
    [["import", "--swebench", "x.jsonl"], "--repos DIR is required"],
    [["import", "--swebench", "x.jsonl", "--repos", ".", "--bogus"], "unknown option --bogus"],
    [["import", "--swebench", "missing.jsonl", "--repos", "."], "missing.jsonl is not a file"],
  ])("%j exits 64 naming the problem", async (argv, said) => {
    const i = io();
    expect(await evalMain("eval", argv, i)).toBe(64);
    expect(i.stderr()).toContain(said);
  });

  it("refuses an --out folder that is not empty, writing nothing into it", async () => {
    const file = writeJsonl(path.join(root, "one.jsonl"), [fx.line]);
    const out = path.join(root, "busy");
    fs.mkdirSync(out);
    fs.writeFileSync(path.join(out, "keep.txt"), "mine");
    const i = io();
    expect(await evalMain("eval", ["import", "--swebench", file, "--repos", fx.reposDir, "--out", out], i)).toBe(64);
    expect(i.stderr()).toContain("exists and is not an empty folder");
    expect(fs.readdirSync(out)).toEqual(["keep.txt"]);
  });
});
