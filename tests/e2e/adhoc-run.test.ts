import { execFileSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { allFiles, rawRequest, REPO, runClient, Started, stateDirIn } from "./harness.js";
import { TaskSpec } from "../../daemon/src/contracts/task-spec.js";
import { pinTestImage } from "../kit/sandbox-image.js";

/**
 * An ad-hoc run on the user's own repository (issue 11): a git repository the
 * test creates, a tiny Node project whose test fails, `run --workspace DIR
 * --goal ...` with the detected test command (package.json `node --test tests/`),
 * a replay that fixes it, approvals through the real client, on the container
 * backend. No task.json, no hidden acceptance.
 */
const BUGGY = "export function add(a, b) {\n  return a - b;\n}\n";
const FIXED = "export function add(a, b) {\n  return a + b;\n}\n";
const TEST = `import test from "node:test";
import assert from "node:assert/strict";
import { add } from "../src/add.js";
test("add adds", () => assert.equal(add(2, 3), 5));
test("add is commutative", () => assert.equal(add(4, 1), add(1, 4)));
`;
const sha256 = (s: string) => crypto.createHash("sha256").update(s).digest("hex");

const FIX_REPLAY = {
  schema_version: 1,
  decisions: [
    { kind: "tool", call: { call_id: "call_read", name: "read_file", arguments: { path: "src/add.js" } } },
    { kind: "tool", call: { call_id: "call_fix", name: "apply_patch", arguments: { path: "src/add.js", version: sha256(BUGGY), old: "a - b", new: "a + b" } } },
    { kind: "tool", call: { call_id: "call_green", name: "run_tests", arguments: { preset: "tests" } } },
    { kind: "final", text: "add adds now" },
  ],
};
const EMPTY_REPLAY = { schema_version: 1, decisions: [{ kind: "final", text: "nothing to do" }] };

const started = new Started();
let imageLock: string;

beforeAll(async () => {
  imageLock = path.join(started.dir("ma-adhoc-image-"), "sandbox-image.lock.json");
  await pinTestImage(imageLock);
}, 600_000);
afterEach(async () => {
  await started.stopDaemons("SIGTERM");
});
afterAll(async () => {
  await started.stopDaemons("SIGKILL");
  started.removeDirs();
});

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args], {
    cwd,
    stdio: "pipe",
    env: { PATH: process.env.PATH, HOME: "/nonexistent" },
  });

/** a state dir with the pinned image, a daemon on it, and a fresh git repository with the bug */
async function setUp(opts: { source?: string } = {}) {
  const tmp = started.dir("ma-adhoc-");
  const stateDir = stateDirIn(tmp, imageLock);
  const ws = path.join(tmp, "myproject");
  const files: Record<string, string> = {
    "package.json": JSON.stringify({ name: "myproject", type: "module", scripts: { test: "node --test tests/" } }, null, 2),
    "package-lock.json": "{}\n",
    "src/add.js": opts.source ?? BUGGY,
    "tests/test_add.js": TEST,
  };
  for (const [rel, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
    fs.writeFileSync(path.join(ws, rel), content);
  }
  git(ws, "init", "-q");
  git(ws, "add", "-A");
  git(ws, "commit", "-qm", "init");
  const d = await started.daemon({ stateDir });
  const replay = (r: object) => {
    const p = path.join(tmp, `replay-${crypto.randomUUID()}.json`);
    fs.writeFileSync(p, JSON.stringify(r));
    return p;
  };
  return { tmp, stateDir, ws, socket: ["--socket", d.socketPath], socketPath: d.socketPath, replay };
}

/** how often this daemon drafted a task from a folder: its log says "task drafted" once per draft */
function draftsLogged(stateDir: string): number {
  const log = path.join(stateDir, "logs", "daemon.log");
  return fs
    .readFileSync(log, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "" && (JSON.parse(l) as { msg?: string }).msg === "task drafted").length;
}

/** a 1.5 GiB file with no blocks on disk */
function sparse(file: string): void {
  fs.writeFileSync(file, "");
  fs.truncateSync(file, 1.5 * 1024 ** 3);
}

async function statusJson(runId: string, socket: string[]): Promise<Record<string, unknown>> {
  const r = await runClient(["status", runId, "--json", ...socket]);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

describe("run --workspace DIR --goal TEXT on a fresh git repository", () => {
  it("completes, verified by the host, with the detected test command; the dirty file is warned about first and the spec is in status and trace; the folder is drafted once (it was drafted again at run, unseen)", async () => {
    const { ws, stateDir, socket, replay } = await setUp();
    fs.writeFileSync(path.join(ws, "NOTES.md"), "my unfinished notes\n"); // untracked: part of the baseline
    const goal = "add(a, b) must return the sum";
    let r = await runClient(["run", "--workspace", ws, "--goal", goal, "--model", "replay", "--replay", replay(FIX_REPLAY), ...socket]);
    expect(r.stderr).toMatch(/warning: the git worktree has 1 changed file\(s\) that become part of the baseline: NOTES\.md/);
    expect(r.stderr).toContain("test command (package.json scripts.test): node --test --test-reporter=tap + files tests/**/*.{js,mjs,cjs} [node_test]");
    const runId = /run (\S+) started/.exec(r.stdout)?.[1] ?? "";
    for (let i = 0; i < 5 && r.code === 3; i++) {
      const s = await statusJson(runId, socket);
      r = await runClient(["approve", runId, String(s.action_id), ...socket]);
    }
    expect({ code: r.code, out: r.stdout + r.stderr }).toMatchObject({ code: 0 });
    expect(r.stdout).toContain("completed: verified by the host Verifier");
    expect(fs.readFileSync(path.join(ws, "src/add.js"), "utf8")).toBe(FIXED); // in place
    expect(fs.readFileSync(path.join(ws, "NOTES.md"), "utf8")).toBe("my unfinished notes\n");

    const s = await statusJson(runId, socket);
    expect(s).toMatchObject({ status: "completed", task: goal, tests: { passed: 2 } });
    expect(s.task_spec).toMatchObject({ name: "adhoc-myproject", task: goal, verify_preset: "tests", image_family: "node" });
    expect((s.task_spec as { acceptance?: unknown }).acceptance).toBeUndefined();
    const trace = await runClient(["trace", runId, "--jsonl", ...socket]);
    const created = trace.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; payload: Record<string, unknown> })
      .find((e) => e.type === "run_created")!;
    expect(created.payload).toMatchObject({ task_spec: { name: "adhoc-myproject" }, test_source: "package.json scripts.test", dirty_files: ["NOTES.md"] });
    // the task shown before the run started is the one that ran: drafted once, not again by POST /runs
    expect(draftsLogged(stateDir)).toBe(1);
  }, 600_000);

  it("an empty change (the replay says final at once) fails as no_changes, even with every test green", async () => {
    // green from the start: only the no_changes rule can fail this run (a task must change something)
    const { ws, socket, replay } = await setUp({ source: FIXED });
    const r = await runClient(["run", "--workspace", ws, "--goal", "make add add", "--replay", replay(EMPTY_REPLAY), ...socket]);
    expect({ code: r.code, out: r.stdout + r.stderr }).toMatchObject({ code: 1 });
    const runId = /run (\S+) started/.exec(r.stdout)?.[1] ?? "";
    const s = await statusJson(runId, socket);
    expect(s.status).toBe("failed");
    expect(JSON.stringify(s.verification)).toContain("no_changes");
    expect(fs.readFileSync(path.join(ws, "src/add.js"), "utf8")).toBe(FIXED);
  }, 600_000);
});

describe("run --goal: --print-task and refused input through the real client", () => {
  it("--print-task prints the drafted spec as JSON, the warnings on stderr, and creates no run", async () => {
    const { ws, socket, stateDir } = await setUp();
    fs.writeFileSync(path.join(ws, "src/add.js"), FIXED); // modified: a dirty worktree
    const r = await runClient(["run", "--workspace", ws, "--goal", "g", "--protect", "docs/**", "--print-task", ...socket]);
    expect({ code: r.code, err: r.stderr }).toMatchObject({ code: 0 });
    const task = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(task).toMatchObject({
      schema_version: 1,
      name: "adhoc-myproject",
      task: "g",
      verify_preset: "tests",
      image_family: "node",
      test_presets: { tests: { command: ["node", "--test", "--test-reporter=tap"], files: ["tests/**/*.{js,mjs,cjs}"], parser: "node_test" } },
    });
    expect(task.writable).toEqual(expect.arrayContaining(["**", "!.git/**", "!**/package-lock.json", "!.github/**", "!AGENTS.md", "!docs/**"]));
    expect(r.stderr).toMatch(/warning: the git worktree has 1 changed file\(s\).*src\/add\.js/);
    const list = await runClient(["list", "--json", ...socket]);
    expect(JSON.parse(list.stdout)).toEqual([]);
    expect(fs.existsSync(path.join(stateDir, "control")) ? fs.readdirSync(path.join(stateDir, "control")) : []).toEqual([]);
    // what it printed is a task.json a user can save, edit and run with --task-spec
    expect(TaskSpec.safeParse(task).success).toBe(true);
    const wrong = await runClient(["run", "--workspace", ws, "--task-spec", path.join(ws, "package.json"), "--print-task", ...socket]);
    expect({ code: wrong.code, err: wrong.stderr }).toMatchObject({ code: 64, err: expect.stringMatching(/--print-task belongs to an ad-hoc run/) });
  }, 600_000);

  it("--print-task on a Python and a Go project: pytest with a JUnit report in the python image, go test -json in the go image", async () => {
    const { tmp, socket } = await setUp();
    const py = path.join(tmp, "pyproj");
    fs.mkdirSync(path.join(py, "tests"), { recursive: true });
    fs.writeFileSync(path.join(py, "pyproject.toml"), "[project]\nname = 'pyproj'\n");
    fs.writeFileSync(path.join(py, "tests/test_a.py"), "def test_a():\n    assert True\n");
    const gomod = path.join(tmp, "gomod");
    fs.mkdirSync(gomod);
    fs.writeFileSync(path.join(gomod, "go.mod"), "module example.com/gomod\n\ngo 1.19\n");
    const pyTask = await runClient(["run", "--workspace", py, "--goal", "g", "--print-task", ...socket]);
    expect({ code: pyTask.code, err: pyTask.stderr }).toMatchObject({ code: 0 });
    expect(JSON.parse(pyTask.stdout)).toMatchObject({
      image_family: "python",
      test_presets: {
        tests: {
          command: [
            "python3",
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--continue-on-collection-errors",
            "-o",
            "junit_family=xunit1",
            "--junitxml=/tmp/mini-agent-junit.xml",
          ],
          parser: "junit_xml",
        },
      },
    });
    const goTask = await runClient(["run", "--workspace", gomod, "--goal", "g", "--print-task", ...socket]);
    expect(JSON.parse(goTask.stdout)).toMatchObject({
      image_family: "go",
      test_presets: { tests: { command: ["go", "test", "-json", "./..."], parser: "go_test_json" } },
    });
    const exitOnly = await runClient(["run", "--workspace", py, "--goal", "g", "--test", "python3 check.py", "--print-task", ...socket]);
    expect(JSON.parse(exitOnly.stdout)).toMatchObject({
      image_family: "python",
      test_presets: { tests: { command: ["python3", "check.py"], parser: "exit_code" } },
    });
    expect(exitOnly.stderr).toMatch(/warning: .*exit code only, no test count \(weaker\)/);
  }, 600_000);

  it("a workspace changed between the draft and its run (package.json edited) is refused as draft_stale naming the file, and no run exists; a draft id is taken once", async () => {
    const { ws, socketPath, replay } = await setUp();
    const post = (p: string, body: object) => rawRequest(socketPath, "POST", p, JSON.stringify(body));
    const draftOf = async () => {
      const d = await post("/v1/tasks/draft", { workspace: ws, goal: "g" });
      expect(d.status).toBe(200);
      return (d.json as { draft_id: string }).draft_id;
    };
    const runWith = (draftId: string) => post("/v1/runs", { workspace: ws, adhoc: { goal: "g", draft_id: draftId }, replay_path: replay(EMPTY_REPLAY) });

    const shown = await draftOf();
    const pkg = JSON.parse(fs.readFileSync(path.join(ws, "package.json"), "utf8")) as { scripts: Record<string, string> };
    fs.writeFileSync(path.join(ws, "package.json"), JSON.stringify({ ...pkg, scripts: { ...pkg.scripts, lint: "true" } }));
    const stale = await runWith(shown);
    expect({ status: stale.status, json: stale.json }).toMatchObject({
      status: 409,
      json: { error: { code: "draft_stale", message: expect.stringMatching(/workspace changed since the task was drafted and shown \(package\.json\)/) } },
    });
    expect((await rawRequest(socketPath, "GET", "/v1/runs")).json).toMatchObject({ kind: "runs", runs: [] });
    expect(stale.text).not.toMatch(/\n\s+at /); // no stack

    // drafted anew from the folder as it is now: runs, once; the same id a second time is refused
    const fresh = await draftOf();
    const ran = await runWith(fresh);
    expect(ran.status).toBe(201);
    const again = await runWith(fresh);
    expect({ status: again.status, code: (again.json as { error: { code: string } }).error.code }).toEqual({ status: 409, code: "draft_stale" });
  }, 600_000);

  it("exits 64 with the daemon's clear message and no stack for each bad input; nothing is created", async () => {
    const { tmp, ws, socket, stateDir } = await setUp();
    fs.writeFileSync(path.join(tmp, "a-file"), "");
    const noTests = path.join(tmp, "empty");
    fs.mkdirSync(noTests);
    const etcLink = path.join(tmp, "share-link");
    fs.symlinkSync("/usr/share", etcLink);
    const cases: Array<[string[], RegExp]> = [
      [["--workspace", path.join(tmp, "missing")], /invalid_workspace: workspace .* does not exist/],
      [["--workspace", path.join(tmp, "a-file")], /is not a folder/],
      [["--workspace", "/"], /is the root folder/],
      [["--workspace", "/root"], /is a home folder/],
      [["--workspace", "/etc"], /invalid_workspace: workspace \/etc is the system folder \/etc/],
      [["--workspace", etcLink], /resolves to \/usr\/share, which is inside the system folder \/usr/],
      [["--workspace", stateDir], /inside the daemon's state dir/],
      [["--workspace", tmp], /contains the daemon's state dir/],
      [["--workspace", ws, "--test", "  "], /invalid_test_command: .*names no program/],
      [["--workspace", ws, "--test", "pytest && echo ok"], /invalid_test_command: .*shell operator/],
      [["--workspace", ws, "--test", "/usr/bin/python3 -m pytest"], /outside the workspace/],
      [["--workspace", noTests], /test_command_not_found: no test command found.*--test "CMD ARG\.\.\."/],
      [["--workspace", ws, "--writable", "../other/**"], /invalid_glob: --writable "\.\.\/other\/\*\*"/],
      [["--workspace", ws, "--protect", "/etc/**"], /invalid_glob: --protect/],
      [["--workspace", ws, "--image-family", "rust"], /unknown_image_family: .*node, python, go/],
    ];
    for (const [args, why] of cases) {
      const r = await runClient(["run", "--goal", "g", ...args, ...socket]);
      expect({ args, code: r.code, err: r.stderr }).toMatchObject({ code: 64, err: expect.stringMatching(why) });
      expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
    }
    const list = await runClient(["list", "--json", ...socket]);
    expect(JSON.parse(list.stdout)).toEqual([]);
  }, 600_000);

  it("a workspace over the copy limits is refused at run before anything is copied (a 1.5 GiB sparse file counts by its length): one line with the figure, the limit and the flag, exit 64, nothing written", async () => {
    const { ws, socket, stateDir, replay } = await setUp();
    // 0 bytes on disk; a baseline or tar copy would have written 1.5 GiB
    fs.mkdirSync(path.join(ws, "node_modules", "blob"), { recursive: true });
    sparse(path.join(ws, "node_modules", "blob", "disk.img"));
    const replayFile = replay(EMPTY_REPLAY);
    const before = new Set(allFiles(stateDir));
    const r = await runClient(["run", "--workspace", ws, "--goal", "g", "--replay", replayFile, ...socket]);
    expect({ code: r.code, out: r.stdout, err: r.stderr }).toMatchObject({ code: 64 });
    // the drafted task's warnings come first (the draft only reads); the refusal itself is one line
    const lines = r.stderr
      .trim()
      .split("\n")
      .filter((l) => l.startsWith("mini-agent-client:"));
    expect(lines).toHaveLength(1);
    // node_modules/ is never copied into the workspace's sandboxes (it enters as a read-only layer), so it is the
    // layer's own ceiling that refuses it, before it is hashed or copied
    expect(lines[0]).toMatch(
      /^mini-agent-client: workspace_too_large: dependency folder node_modules\/ too large for its read-only layer: 1\.5 GiB in 1 file \(limit 1 GiB; a sparse file counts by its length\)/,
    );
    // nothing new in the state dir (no control dir, no baseline, no dense copy), no run
    const added = allFiles(stateDir).filter((f) => !before.has(f) && !path.relative(stateDir, f).startsWith("logs/"));
    expect(added).toEqual([]);
    expect(JSON.parse((await runClient(["list", "--json", ...socket])).stdout)).toEqual([]);

    // the same through a fixture: its repo/ is measured before it is copied into the new workspace
    const fixture = path.join(path.dirname(ws), "sparse-fixture");
    fs.cpSync(path.join(REPO, "fixtures", "linkcheck"), fixture, { recursive: true });
    sparse(path.join(fixture, "repo", "disk.img"));
    const fresh = path.join(path.dirname(ws), "fresh-ws");
    const f = await runClient(["run", "--fixture", fixture, "--workspace", fresh, ...socket]);
    expect({ code: f.code, err: f.stderr }).toMatchObject({
      code: 64,
      err: expect.stringMatching(/workspace_too_large: fixture repo\/ too large: 1\.5 GiB in \d+ files/),
    });
    expect(fs.existsSync(fresh)).toBe(false);
    expect(allFiles(stateDir).filter((x) => !before.has(x) && !path.relative(stateDir, x).startsWith("logs/"))).toEqual([]);
  }, 600_000);

  it("too many files is refused with --max-workspace-files named; the flags raise the limits and the same run then starts", async () => {
    const { ws, socket, replay } = await setUp({ source: FIXED });
    for (let i = 0; i < 30; i++) fs.writeFileSync(path.join(ws, `data-${i}.txt`), "x".repeat(4096));
    const flags = ["--replay", replay(EMPTY_REPLAY), ...socket];
    let r = await runClient(["run", "--workspace", ws, "--goal", "g", "--max-workspace-files", "20", ...flags]);
    expect({ code: r.code, err: r.stderr }).toMatchObject({
      code: 64,
      err: expect.stringMatching(
        /\nmini-agent-client: workspace_too_large: workspace has too many files: 0\.1 MiB in 34 files \(limit 20 files\); raise with --max-workspace-files\n$/,
      ),
    });
    r = await runClient(["run", "--workspace", ws, "--goal", "g", "--max-workspace-bytes", "64K", ...flags]);
    expect({ code: r.code, err: r.stderr }).toMatchObject({
      code: 64,
      err: expect.stringMatching(/workspace too large: 0\.1 MiB in 34 files \(limit 0\.1 MiB\); raise with --max-workspace-bytes/),
    });
    r = await runClient(["run", "--workspace", ws, "--goal", "g", "--max-workspace-files", "x", ...flags]);
    expect({ code: r.code, err: r.stderr }).toMatchObject({ code: 64, err: expect.stringMatching(/--max-workspace-files: a whole number/) });
    expect(JSON.parse((await runClient(["list", "--json", ...socket])).stdout)).toEqual([]);

    // raised: the run is created (and fails as no_changes: the replay changes nothing)
    r = await runClient(["run", "--workspace", ws, "--goal", "g", "--max-workspace-files", "40", "--max-workspace-bytes", "1M", ...flags]);
    expect(r.stdout).toMatch(/run \S+ started/);
    expect(r.stderr).not.toMatch(/workspace_too_large/);
  }, 600_000);
});
