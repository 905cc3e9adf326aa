import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DaemonHandle, runClient, Started, stateDirIn } from "./harness.js";
import { pinTestImage } from "../kit/sandbox-image.js";

/**
 * A repository is data, never a program on the host. Each hostile repository
 * below is built with the real git, received as a tarball (extraction gives
 * every file new stat data, so a git status would re-read, and re-filter,
 * every file) and drafted through the real client and daemon. Each names a
 * marker command that writes a file outside the repository; none may ever
 * exist. Regression: `git status` ran a clean filter whose driver name held
 * `=` (`* filter=lfs=x`), which `-c filter.lfs=x.clean=` could not override.
 */
const HOOKS = [
  "applypatch-msg",
  "pre-applypatch",
  "post-applypatch",
  "pre-commit",
  "pre-merge-commit",
  "prepare-commit-msg",
  "commit-msg",
  "post-commit",
  "pre-rebase",
  "post-checkout",
  "post-merge",
  "pre-push",
  "pre-receive",
  "update",
  "proc-receive",
  "post-receive",
  "post-update",
  "reference-transaction",
  "push-to-checkout",
  "pre-auto-gc",
  "post-rewrite",
  "sendemail-validate",
  "fsmonitor-watchman",
  "p4-changelist",
  "p4-prepare-changelist",
  "p4-post-changelist",
  "p4-pre-submit",
  "post-index-change",
];
const BUGGY = "export function add(a, b) {\n  return a - b;\n}\n";
const TEST = `import test from "node:test";
import assert from "node:assert/strict";
import { add } from "../src/add.js";
test("add adds", () => assert.equal(add(2, 3), 5));
`;
const PROJECT: Record<string, string> = {
  "package.json": JSON.stringify({ name: "received", type: "module", scripts: { test: "node --test tests/" } }),
  "src/add.js": BUGGY,
  "tests/test_add.js": TEST,
  ".gitignore": "*.log\n",
};

/** What a shape does to a built repository: `repo/` is the workspace, `outside/` its sibling in the same tarball. */
interface Ctx {
  repo: string;
  outside: string;
  /** a shell command that leaves a marker named after the shape and `what` */
  mark(what: string): string;
}
interface Shape {
  name: string;
  /** files committed with the project (attributes naming a driver, say) */
  committed?: Record<string, string>;
  /** applied after the commit: the test's own git never runs on the hostile repository */
  hostile(c: Ctx): void;
  /** the draft's one-line reason when there is no list (else the list is checked) */
  unavailable?: RegExp;
}

const cfg = (c: Ctx, text: string) => fs.appendFileSync(path.join(c.repo, ".git/config"), text);
const put = (file: string, text: string, mode = 0o644) => {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text, { mode });
};

const SHAPES: Shape[] = [
  {
    name: "filter-eq-clean",
    committed: { ".gitattributes": "* filter=lfs=x\n" },
    hostile: (c) => cfg(c, `[filter "lfs=x"]\n\tclean = ${c.mark("clean")}\n\tsmudge = ${c.mark("smudge")}\n\trequired = true\n`),
  },
  {
    name: "filter-eq-process",
    committed: { ".gitattributes": "* filter=lfs=p\n" },
    hostile: (c) => cfg(c, `[filter "lfs=p"]\n\tprocess = ${c.mark("process")}\n\trequired = true\n`),
  },
  {
    name: "include-path",
    committed: { ".gitattributes": "* filter=inc=x\n" },
    hostile: (c) => {
      put(path.join(c.repo, ".git/more.config"), `[filter "inc=x"]\n\tclean = ${c.mark("clean")}\n[core]\n\tfsmonitor = ${c.mark("fsmonitor")}\n`);
      cfg(c, "[include]\n\tpath = more.config\n");
    },
  },
  {
    name: "include-if",
    committed: { ".gitattributes": "* filter=iif=x\n" },
    hostile: (c) => {
      put(path.join(c.outside, "if.config"), `[filter "iif=x"]\n\tclean = ${c.mark("clean")}\n`);
      cfg(c, '[includeIf "gitdir:/"]\n\tpath = ../../outside/if.config\n[includeIf "onbranch:*"]\n\tpath = ../../outside/if.config\n');
    },
  },
  {
    name: "attributes-file-outside",
    hostile: (c) => {
      put(path.join(c.outside, "attributes"), "* filter=attr=x\n");
      cfg(c, `[core]\n\tattributesFile = ../outside/attributes\n[filter "attr=x"]\n\tclean = ${c.mark("clean")}\n`);
    },
  },
  {
    name: "info-attributes",
    hostile: (c) => {
      put(path.join(c.repo, ".git/info/attributes"), "* filter=info=x diff=info\n");
      cfg(c, `[filter "info=x"]\n\tclean = ${c.mark("clean")}\n[diff "info"]\n\ttextconv = ${c.mark("textconv")}\n`);
    },
  },
  {
    name: "dotgit-file",
    committed: { ".gitattributes": "* filter=far=x\n" },
    hostile: (c) => {
      // the git dir moves out of the workspace; the workspace keeps a pointer to it
      fs.renameSync(path.join(c.repo, ".git"), path.join(c.outside, "real.git"));
      put(path.join(c.repo, ".git"), "gitdir: ../outside/real.git\n");
      fs.appendFileSync(
        path.join(c.outside, "real.git/config"),
        `[filter "far=x"]\n\tclean = ${c.mark("clean")}\n[core]\n\tfsmonitor = ${c.mark("fsmonitor")}\n`,
      );
    },
    unavailable: /\.git is a file naming a git directory elsewhere.*not followed/,
  },
  { name: "fsmonitor", hostile: (c) => cfg(c, `[core]\n\tfsmonitor = ${c.mark("fsmonitor")}\n\tfsmonitorHookVersion = 2\n`) },
  { name: "pager", hostile: (c) => cfg(c, `[core]\n\tpager = ${c.mark("core")}\n[pager]\n\tstatus = ${c.mark("status")}\n\tdiff = ${c.mark("diff")}\n`) },
  { name: "diff-external", hostile: (c) => cfg(c, `[diff]\n\texternal = ${c.mark("external")}\n`) },
  {
    name: "textconv",
    committed: { ".gitattributes": "* diff=tc merge=md\n" },
    hostile: (c) => cfg(c, `[diff "tc"]\n\ttextconv = ${c.mark("textconv")}\n\tcommand = ${c.mark("command")}\n[merge "md"]\n\tdriver = ${c.mark("merge")}\n`),
  },
  {
    name: "hooks",
    hostile: (c) => {
      for (const h of HOOKS) put(path.join(c.repo, ".git/hooks", h), `#!/bin/sh\n${c.mark(h)}\n`, 0o755);
      for (const h of HOOKS) put(path.join(c.repo, ".git/custom-hooks", h), `#!/bin/sh\n${c.mark(`path-${h}`)}\n`, 0o755);
      cfg(c, "[core]\n\thooksPath = .git/custom-hooks\n");
    },
  },
  {
    name: "ssh-command",
    hostile: (c) => cfg(c, `[core]\n\tsshCommand = ${c.mark("ssh")}\n\tgitProxy = ${c.mark("proxy")}\n\taskPass = ${c.mark("askpass")}\n`),
  },
  {
    name: "worktree",
    hostile: (c) => {
      put(path.join(c.outside, "wt/.gitattributes"), "* filter=wt=x\n");
      put(path.join(c.outside, "wt/src/add.js"), "elsewhere\n");
      cfg(c, `[core]\n\tworktree = ../../outside/wt\n[filter "wt=x"]\n\tclean = ${c.mark("clean")}\n`);
    },
  },
  {
    name: "remote-programs",
    hostile: (c) =>
      cfg(
        c,
        `[credential]\n\thelper = !${c.mark("credential")}\n[protocol "ext"]\n\tallow = always\n[remote "origin"]\n\turl = ext::${c.mark("ext")}\n\tuploadpack = ${c.mark("uploadpack")}\n\treceivepack = ${c.mark("receivepack")}\n[uploadpack]\n\tpackObjectsHook = ${c.mark("packobjects")}\n`,
      ),
  },
  {
    name: "editors-and-aliases",
    hostile: (c) =>
      cfg(
        c,
        `[core]\n\teditor = ${c.mark("editor")}\n[sequence]\n\teditor = ${c.mark("sequence")}\n[gpg]\n\tprogram = ${c.mark("gpg")}\n[commit]\n\tgpgSign = true\n[alias]\n\tstatus = !${c.mark("alias-status")}\n\tst = !${c.mark("alias-st")}\n[sendemail]\n\tsmtpServer = ${c.mark("smtp")}\n`,
      ),
  },
  {
    name: "submodule-update",
    committed: { ".gitmodules": '[submodule "sub"]\n\tpath = sub\n\turl = ./sub\n\tupdate = !touch-never\n' },
    hostile: (c) => cfg(c, `[submodule "sub"]\n\tupdate = !${c.mark("update")}\n\turl = ext::${c.mark("url")}\n`),
  },
];

const started = new Started();
let root: string;
let markers: string;
let imageLock: string;
let daemon: DaemonHandle;
let socket: string[];

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args], {
    cwd,
    stdio: "pipe",
    env: { PATH: process.env.PATH, HOME: "/nonexistent", GIT_CONFIG_NOSYSTEM: "1" },
  });

/**
 * Builds `shape` under a fresh folder (project committed, then made hostile
 * and dirty: src/add.js modified, NOTES.md untracked), tars it and extracts
 * it elsewhere; returns the received workspace.
 */
function received(shape: Shape): { ws: string; ran: () => string[] } {
  // a fresh folder each time: the test's own git must never run on a repository already made hostile
  const build = fs.mkdtempSync(path.join(root, `build-${shape.name}-`));
  const repo = path.join(build, "repo");
  const outside = path.join(build, "outside");
  fs.mkdirSync(outside, { recursive: true });
  for (const [rel, text] of Object.entries({ ...PROJECT, ...shape.committed })) put(path.join(repo, rel), text);
  git(repo, "init", "-q");
  git(repo, "add", "-A");
  git(repo, "commit", "-qm", "init");
  // markers carry the build's own name, so each test sees only what its repository ran
  const tag = path.basename(build);
  shape.hostile({ repo, outside, mark: (what) => `touch ${markers}/${tag}--${what}` });
  put(path.join(repo, "src/add.js"), BUGGY.replace("a - b", "b - a"));
  put(path.join(repo, "NOTES.md"), "mine\n");
  put(path.join(repo, "debug.log"), "ignored\n");
  const tarball = `${build}.tar`;
  execFileSync("tar", ["-cf", tarball, "-C", build, "."]);
  const into = fs.mkdtempSync(path.join(root, `received-${shape.name}-`));
  execFileSync("tar", ["-xf", tarball, "-C", into]);
  return { ws: path.join(into, "repo"), ran: () => fs.readdirSync(markers).filter((m) => m.startsWith(`${tag}--`)) };
}

beforeAll(async () => {
  root = started.dir("ma-hostile-");
  markers = started.dir("ma-hostile-markers-");
  imageLock = path.join(root, "image", "sandbox-image.lock.json");
  await pinTestImage(imageLock);
  daemon = await started.daemon({ stateDir: stateDirIn(root, imageLock) });
  socket = ["--socket", daemon.socketPath];
}, 600_000);
afterAll(async () => {
  await started.stopDaemons("SIGTERM");
  started.removeDirs();
});

describe("hostile repositories received as tarballs: drafting never runs a program the repository names", () => {
  it.each(SHAPES.map((s) => [s.name, s] as const))(
    "--print-task on %s writes no marker, and the dirty list is read from the workspace itself",
    async (_, shape) => {
      const { ws, ran } = received(shape);
      const r = await runClient(["run", "--workspace", ws, "--goal", "g", "--print-task", ...socket]);
      expect({ code: r.code, err: r.stderr }).toMatchObject({ code: 0 });
      expect(JSON.parse(r.stdout)).toMatchObject({ name: "adhoc-repo", verify_preset: "tests" });
      expect(ran()).toEqual([]);
      if (shape.unavailable) {
        expect(r.stderr).toMatch(/could not list the git worktree's changed files/);
        expect(r.stderr).toMatch(shape.unavailable);
      } else {
        const listed = /the git worktree has \d+ changed file\(s\) that become part of the baseline: (.*)/.exec(r.stderr)?.[1]?.split(", ");
        expect(listed).toEqual(expect.arrayContaining(["NOTES.md", "src/add.js"]));
        expect(listed).not.toContain("debug.log");
      }
    },
  );

  it.each(["filter-eq-clean", "include-path", "dotgit-file", "hooks"])(
    "a real run (replay) on %s writes no marker from draft to verdict",
    async (name) => {
      const { ws, ran } = received(SHAPES.find((s) => s.name === name)!);
      const replay = path.join(root, `replay-${name}.json`);
      fs.writeFileSync(replay, JSON.stringify({ schema_version: 1, decisions: [{ kind: "final", text: "nothing to do" }] }));
      const r = await runClient(["run", "--workspace", ws, "--goal", "g", "--model", "replay", "--replay", replay, ...socket]);
      // nothing changed: the run fails as no_changes after the Verifier ran the tests in a sandbox
      expect({ code: r.code, out: r.stdout + r.stderr }).toMatchObject({ code: 1, out: expect.stringMatching(/no_changes/) });
      expect(ran()).toEqual([]);
    },
    300_000,
  );

  it("a benign dirty repository, received as a tarball, is listed exactly: modified, staged, deleted, untracked; ignored not", async () => {
    const { ws } = received({
      name: "benign",
      committed: { "docs/old.md": "old\n", "docs/keep.md": "keep\n" },
      hostile: (c) => {
        put(path.join(c.repo, "docs/keep.md"), "staged change\n");
        put(path.join(c.repo, "staged-new.txt"), "new\n");
        git(c.repo, "add", "docs/keep.md", "staged-new.txt");
        fs.rmSync(path.join(c.repo, "docs/old.md"));
        put(path.join(c.repo, "build.log"), "ignored\n");
      },
    });
    const r = await runClient(["run", "--workspace", ws, "--goal", "g", "--print-task", ...socket]);
    expect({ code: r.code, err: r.stderr }).toMatchObject({ code: 0 });
    expect(r.stderr).toContain(
      "warning: the git worktree has 5 changed file(s) that become part of the baseline: NOTES.md, docs/keep.md, docs/old.md, src/add.js, staged-new.txt",
    );
  });
});
