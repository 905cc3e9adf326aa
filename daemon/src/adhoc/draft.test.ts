import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isMiniAgentError, type ErrorCode } from "../errors.js";
import { classify } from "../policy/classify.js";
import { protectedChanges } from "../verifier/protected-paths.js";
import type { Manifest } from "../workspace/manifest.js";
import { draftTask, type DraftDeps, type DraftInput } from "./draft.js";
import { dirtyFiles } from "./git-state.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
function tmp(prefix = "adhoc-draft-"): string {
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

function deps(over: Partial<DraftDeps> = {}): DraftDeps {
  return { stateDir: tmp("adhoc-state-"), homeDirs: ["/nonexistent-home"], ...over };
}
function project(): string {
  const ws = tmp();
  write(ws, { "package.json": JSON.stringify({ scripts: { test: "node --test tests/" } }), "tests/test_x.js": "", "src/x.js": "" });
  return ws;
}
const input = (workspace: string, over: Partial<DraftInput> = {}): DraftInput => ({ workspace, goal: "fix x", writable: [], protect: [], ...over });

async function refusal(p: Promise<unknown>): Promise<{ code: ErrorCode; message: string }> {
  try {
    await p;
  } catch (err) {
    if (isMiniAgentError(err)) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error("expected a refusal");
}

describe("draftTask: the spec", () => {
  it("is a valid TaskSpec: adhoc-<folder>, the goal, one `tests` preset, no acceptance, a family", async () => {
    const ws = project();
    const d = await draftTask(input(ws), deps());
    expect(d.task).toMatchObject({
      schema_version: 1,
      name: `adhoc-${path.basename(ws)}`,
      task: "fix x",
      verify_preset: "tests",
      image_family: "node",
      test_presets: { tests: { command: ["node", "--test", "--test-reporter=tap"], files: ["tests/**/*.{js,mjs,cjs}"], parser: "node_test" } },
    });
    expect(d.task.acceptance).toBeUndefined();
    expect(d.test_source).toBe("package.json scripts.test");
  });

  it("a go project gets a longer test timeout and tool call than node or python (a cold build every time)", async () => {
    const go = await draftTask(input(project(), { test: "go test ./..." }), deps());
    expect(go.task).toMatchObject({ image_family: "go", test_presets: { tests: { timeout_seconds: 300 } }, budgets: { per_call_seconds: 300 } });
    const node = await draftTask(input(project()), deps());
    expect(node.task).toMatchObject({ test_presets: { tests: { timeout_seconds: 120 } }, budgets: { per_call_seconds: 120, tool_calls: 40 } });
  });

  it("--image-family wins over what the command suggests, and the mismatch is a warning", async () => {
    const d = await draftTask(input(project(), { test: "go test ./...", imageFamily: "python" }), deps());
    expect(d.task.image_family).toBe("python");
    expect(d.warnings.join("\n")).toMatch(/--image-family python, but go suggests go/);
  });
});

describe("draftTask: protected paths always beat the default writable set", () => {
  const manifest = (files: string[], hash: string): Manifest => ({
    schema_version: 1,
    files: Object.fromEntries(files.map((f) => [f, hash])),
    special: {},
    digest: "0".repeat(64),
  });

  it("the Verifier reports a changed lock file, CI file, .git file or AGENTS.md, and accepts src/ and a new file", async () => {
    const d = await draftTask(input(project(), { protect: ["docs/**"] }), deps());
    const paths = [
      "src/x.js",
      "node_modules/dep/index.js",
      "package-lock.json",
      "sub/go.sum",
      ".github/workflows/ci.yml",
      ".gitlab-ci.yml",
      "AGENTS.md",
      ".git/config",
      "docs/a.md",
    ];
    const before = manifest(paths, "a".repeat(64));
    const after = manifest([...paths, "src/new.js"], "b".repeat(64));
    const changed = protectedChanges(d.task, before, after).sort();
    expect(changed).toEqual([
      ".git/config",
      ".github/workflows/ci.yml",
      ".gitlab-ci.yml",
      "AGENTS.md",
      "docs/a.md",
      "node_modules/dep/index.js",
      "package-lock.json",
      "sub/go.sum",
    ]);
  });

  it("the policy denies a write to a protected path even though `**` is writable", async () => {
    const d = await draftTask(input(project()), deps());
    const verdict = (rel: string) => classify("apply_patch", { path: rel, version: "absent", old: "", new: "x" }, d.task).verdict;
    expect(verdict("src/new.js")).toBe("ask");
    expect(verdict("package-lock.json")).toBe("deny");
    expect(verdict(".github/workflows/x.yml")).toBe("deny");
    expect(verdict("AGENTS.md")).toBe("deny");
    // regression: the model could write the workspace policy file and so steer the next run's policy
    expect(verdict(".mini-agent/policy.json")).toBe("deny");
    expect(verdict("CLAUDE.md")).toBe("deny");
  });

  it("regression: files that later run on the host (git hooks, hook managers, editor tasks, dev containers, assistant settings, .envrc, nested AGENTS.md/CLAUDE.md) were writable by default", async () => {
    const d = await draftTask(input(project()), deps());
    const verdict = (rel: string) => classify("apply_patch", { path: rel, version: "absent", old: "", new: "x" }, d.task).verdict;
    const hostRun = [
      ".husky/pre-commit",
      ".husky/_/husky.sh",
      ".githooks/pre-push",
      ".pre-commit-config.yaml",
      "lefthook.yml",
      ".lefthook.yml",
      ".vscode/tasks.json",
      ".vscode/launch.json",
      ".vscode/settings.json",
      ".devcontainer/devcontainer.json",
      ".devcontainer.json",
      ".claude/settings.json",
      ".claude/hooks/x.sh",
      ".cursor/mcp.json",
      ".mcp.json",
      ".idea/workspace.xml",
      ".envrc",
      "services/api/.envrc",
      "packages/app/AGENTS.md",
      "docs/deep/CLAUDE.md",
    ];
    for (const rel of hostRun) expect({ rel, verdict: verdict(rel) }).toEqual({ rel, verdict: "deny" });
    const before = manifest(hostRun, "a".repeat(64));
    expect(protectedChanges(d.task, before, manifest(hostRun, "b".repeat(64))).sort()).toEqual([...hostRun].sort());
    // ordinary files beside them stay writable
    for (const rel of ["src/hooks/useX.ts", "docs/agents.txt", "vscode-notes.md"]) expect(verdict(rel)).toBe("ask");
  });

  it("a --writable that names a host-run file or its glob lifts that protection; `**` or a wider glob never does; --protect still wins", async () => {
    const verdicts = async (writable: string[], protect: string[] = []) => {
      const d = await draftTask(input(project(), { writable, protect }), deps());
      return (rel: string) => classify("apply_patch", { path: rel, version: "absent", old: "", new: "x" }, d.task).verdict;
    };
    const named = await verdicts(["src/**", ".husky/pre-commit", ".vscode/tasks.json", "packages/app/AGENTS.md", ".claude/**"]);
    for (const rel of [".husky/pre-commit", ".vscode/tasks.json", "packages/app/AGENTS.md", ".claude/settings.json"]) expect(named(rel)).toBe("ask");
    // the root rules files stay protected whatever --writable says, as before
    expect(named("AGENTS.md")).toBe("deny");
    // not named: still protected
    expect(named(".vscode/launch.json")).toBe("deny");
    expect(named(".githooks/pre-push")).toBe("deny");
    const wide = await verdicts(["**", ".vscode/*", ".husky/*"]);
    for (const rel of [".husky/pre-commit", ".vscode/tasks.json", "x/CLAUDE.md", ".envrc"]) expect(wide(rel)).toBe("deny");
    const both = await verdicts([".husky/pre-commit"], [".husky/**"]);
    expect(both(".husky/pre-commit")).toBe("deny");
  });

  it("--writable replaces the default; --protect adds to the defaults", async () => {
    const d = await draftTask(input(project(), { writable: ["src/**"], protect: ["src/vendor/**"] }), deps());
    expect(d.task.writable).toContain("src/**");
    expect(d.task.writable).not.toContain("**");
    expect(d.task.writable).toEqual(expect.arrayContaining(["!src/vendor/**", "!.git/**", "!**/package-lock.json", "!AGENTS.md"]));
    expect(d.task.creatable).toEqual(d.task.writable);
  });
});

describe("draftTask: bad input is refused with a typed code before anything is read or prepared", () => {
  it("a workspace that does not exist, is a file, is /, a home folder, the state dir, inside it or containing it", async () => {
    const stateParent = tmp();
    const stateDir = path.join(stateParent, "state");
    fs.mkdirSync(path.join(stateDir, "sub"), { recursive: true });
    const file = path.join(project(), "package.json");
    const home = project();
    const d = deps({ stateDir, homeDirs: [home] });
    const cases: Array<[string, RegExp]> = [
      ["/no/such/folder", /does not exist/],
      [file, /is not a folder/],
      ["/", /root folder/],
      ["/root", /home folder/],
      [home, /home folder/],
      [path.dirname(home), /contains a home folder/],
      ["/home", /contains a home folder/],
      [stateDir, /inside the daemon's state dir/],
      [path.join(stateDir, "sub"), /inside the daemon's state dir/],
      [stateParent, /contains the daemon's state dir/],
    ];
    for (const [ws, why] of cases) {
      expect(await refusal(draftTask(input(ws), d)), ws).toEqual({ code: "invalid_workspace", message: expect.stringMatching(why) });
    }
  });

  it("regression: a system folder (/etc, /usr/..., /var/lib, /proc, /sys, /dev, /boot, /opt, /srv, /var/tmp itself) or a link to one was accepted as a workspace", async () => {
    const d = deps();
    const linkParent = tmp();
    fs.symlinkSync("/etc", path.join(linkParent, "etc-link"));
    fs.symlinkSync("/usr/share", path.join(linkParent, "share-link"));
    const cases: Array<[string, RegExp]> = [
      ["/etc", /is the system folder \/etc;/],
      ["/usr/share", /is inside the system folder \/usr;/],
      ["/var", /is the system folder \/var;/],
      ["/var/lib", /is inside the system folder \/var;/],
      ["/var/tmp", /is the system folder \/var\/tmp|is inside the system folder \/var;/],
      ["/proc", /system folder \/proc;/],
      ["/sys", /system folder \/sys;/],
      ["/dev", /system folder \/dev;/],
      ["/boot", /system folder \/boot;/],
      ["/opt", /system folder \/opt;/],
      ["/srv", /system folder \/srv;/],
      [path.join(linkParent, "etc-link"), /resolves to \/etc, which is the system folder \/etc;/],
      [path.join(linkParent, "share-link"), /resolves to \/usr\/share, which is inside the system folder \/usr;/],
    ];
    for (const [ws, why] of cases) {
      if (!fs.existsSync(ws)) continue; // /boot, /srv or /opt may be absent in a container
      expect(await refusal(draftTask(input(ws), d)), ws).toEqual({ code: "invalid_workspace", message: expect.stringMatching(why) });
    }
    // scratch folders stay usable: a project below /tmp (every other test here) and below /var/tmp
    const scratch = fs.mkdtempSync("/var/tmp/adhoc-scratch-");
    dirs.push(scratch);
    write(scratch, { "package.json": JSON.stringify({ scripts: { test: "node --test tests/" } }), "tests/test_x.js": "" });
    expect((await draftTask(input(scratch), d)).workspace).toBe(fs.realpathSync(scratch));
  });

  it("a --test that names no program, an undetectable project, an escaping glob, an unknown image family", async () => {
    const ws = project();
    expect(await refusal(draftTask(input(ws, { test: "   " }), deps()))).toMatchObject({
      code: "invalid_test_command",
      message: expect.stringMatching(/names no program.*--test "CMD ARG..."/),
    });
    expect(await refusal(draftTask(input(ws, { test: "pytest && rm -rf /" }), deps()))).toMatchObject({ code: "invalid_test_command" });
    expect(await refusal(draftTask(input(tmp()), deps()))).toMatchObject({
      code: "test_command_not_found",
      message: expect.stringMatching(/--test "CMD ARG..."/),
    });
    // regression: a chained test script is refused with the command to give, not the placeholder
    const chained = tmp();
    write(chained, { "package.json": JSON.stringify({ scripts: { test: "npm run test:unit && npm run lint", "test:unit": "node --test", lint: "x" } }) });
    expect(await refusal(draftTask(input(chained), deps()))).toMatchObject({
      code: "test_command_not_found",
      message: expect.stringMatching(/scripts\["test:unit"\] is "node --test".*; give the command that runs the tests with --test "node --test"$/),
    });
    for (const glob of ["/etc/**", "../x/**", "~/x", "src/../../x", "!src/**"]) {
      expect(await refusal(draftTask(input(ws, { writable: [glob] }), deps())), glob).toMatchObject({ code: "invalid_glob" });
      expect(await refusal(draftTask(input(ws, { protect: [glob] }), deps())), glob).toMatchObject({ code: "invalid_glob" });
    }
    expect(await refusal(draftTask(input(ws, { imageFamily: "rust" }), deps()))).toMatchObject({
      code: "unknown_image_family",
      message: expect.stringMatching(/node, python, go/),
    });
  });
});

describe("dirty git worktree: listed as a warning, read as data without running git", () => {
  const sh = (cwd: string, ...args: string[]) =>
    execFileSync("git", args, { cwd, env: { PATH: process.env.PATH, HOME: "/nonexistent", GIT_CONFIG_NOSYSTEM: "1" }, stdio: "pipe" });
  function gitRepo(): string {
    const ws = project();
    sh(ws, "init", "-q");
    sh(ws, "-c", "user.email=t@t", "-c", "user.name=t", "add", "-A");
    sh(ws, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init");
    return ws;
  }

  it("modified, deleted, untracked files are listed; ignored ones are not; a clean tree has none", async () => {
    const ws = gitRepo();
    expect((await dirtyFiles(ws)).files).toEqual([]);
    write(ws, { "src/x.js": "changed", "notes.txt": "mine", ".gitignore": "*.log\n", "debug.log": "" });
    fs.rmSync(path.join(ws, "tests/test_x.js"));
    expect(await dirtyFiles(ws)).toEqual({ files: [".gitignore", "notes.txt", "src/x.js", "tests/test_x.js"], unavailable: null });
    const d = await draftTask(input(ws), deps());
    expect(d.dirty_files).toEqual([".gitignore", "notes.txt", "src/x.js", "tests/test_x.js"]);
    expect(d.warnings[0]).toMatch(/4 changed file\(s\) that become part of the baseline: \.gitignore, notes\.txt/);
  });

  it("regression: a hostile .git/config (core.fsmonitor, a clean filter, a hooks path) never runs its programs", async () => {
    const ws = gitRepo();
    const markers = tmp("adhoc-markers-");
    const script = path.join(markers, "evil.sh");
    fs.writeFileSync(script, `#!/bin/sh\ntouch ${markers}/ran-$1\ncat\n`, { mode: 0o755 });
    for (const name of ["post-index-change", "pre-commit"])
      fs.writeFileSync(path.join(markers, name), `#!/bin/sh\ntouch ${markers}/ran-hook\n`, { mode: 0o755 });
    fs.appendFileSync(
      path.join(ws, ".git/config"),
      `[core]\n\tfsmonitor = ${script} fsmonitor\n\thooksPath = ${markers}\n[filter "evil"]\n\tclean = ${script} clean\n\tsmudge = ${script} smudge\n\trequired = true\n`,
    );
    write(ws, { ".gitattributes": "* filter=evil\n" });
    // stat data changed on a tracked file: the case where status runs the clean filter to compare content
    write(ws, { "src/x.js": "changed" });
    const d = await dirtyFiles(ws);
    expect(fs.readdirSync(markers).filter((f) => f.startsWith("ran-"))).toEqual([]);
    expect(d.files).toEqual(expect.arrayContaining([".gitattributes", "src/x.js"]));
  });

  it("a .git file (a linked worktree) is not followed: no list, and the draft says why in one line", async () => {
    expect(await dirtyFiles(project())).toEqual({ files: [], unavailable: null });
    const ws = project();
    fs.writeFileSync(path.join(ws, ".git"), `gitdir: ${gitRepo()}/.git\n`);
    const drafted = await draftTask(input(ws), deps());
    expect(drafted.dirty_files).toEqual([]);
    expect(drafted.warnings[0]).toMatch(
      /could not list the git worktree's changed files \(\.git is a file naming a git directory elsewhere .*it is not followed\)/,
    );
  });
});
