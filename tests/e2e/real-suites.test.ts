import { execFile, execFileSync, spawnSync } from "node:child_process";
import { promisify } from "node:util";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDockerClient } from "../../daemon/src/sandbox/docker-client.js";
import { unstableSaid } from "../../daemon/src/contracts/run-view.js";
import { readTraceEvent } from "../../daemon/src/contracts/trace-event.js";
import { readImageLock } from "../../daemon/src/sandbox/image-lock.js";
import { buildFamily } from "../../sandbox-image/image-builder.js";
import { pinTestImage } from "../kit/sandbox-image.js";
import { REPO, runClient, Started, stateDirIn } from "./harness.js";

/**
 * Projects laid out as real ones are, each through the real client on the container backend:
 * a vitest suite with its node_modules (native rolldown binding: needs librt in the node image),
 * and pytest on a src layout, configured in pyproject.toml or with `-o pythonpath=src` (which
 * crashed Debian's pytest 7.2 without a pytest config table). Each run fixes one bug by replay
 * and the Verifier's count must equal what the same runner counts on the host.
 */
const started = new Started();
let socket: string[];
let tmp: string;
let stateDir: string;

beforeAll(async () => {
  tmp = started.dir("ma-suites-");
  const imageLock = path.join(tmp, "lock", "sandbox-image.lock.json");
  await pinTestImage(imageLock, "node");
  await pinTestImage(imageLock, "python");
  stateDir = stateDirIn(tmp, imageLock);
  const d = await started.daemon({ stateDir });
  socket = ["--socket", d.socketPath];
}, 900_000);

afterAll(async () => {
  await started.stopDaemons("SIGTERM");
  started.removeDirs();
});

const sha256 = (s: string) => crypto.createHash("sha256").update(s).digest("hex");

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args], {
    cwd,
    stdio: "pipe",
    env: { PATH: process.env.PATH, HOME: "/nonexistent" },
  });

/** A git repository made of `files`, committed, so the ad-hoc run has a clean baseline. */
function project(name: string, files: Record<string, string>): string {
  const ws = path.join(tmp, name);
  for (const [rel, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
    fs.writeFileSync(path.join(ws, rel), content);
  }
  git(ws, "init", "-q");
  git(ws, "add", "-A");
  git(ws, "commit", "-qm", "init");
  return ws;
}

/** The replay a person would expect: read the file, fix `a - b`, run the tests, stop. */
function fixReplay(file: string, buggy: string, from: string, to: string): string {
  const p = path.join(tmp, `replay-${crypto.randomUUID()}.json`);
  const decisions = [
    { kind: "tool", call: { call_id: "c_read", name: "read_file", arguments: { path: file } } },
    { kind: "tool", call: { call_id: "c_fix", name: "apply_patch", arguments: { path: file, version: sha256(buggy), old: from, new: to } } },
    { kind: "tool", call: { call_id: "c_green", name: "run_tests", arguments: { preset: "tests" } } },
    { kind: "final", text: "fixed" },
  ];
  fs.writeFileSync(p, JSON.stringify({ schema_version: 1, decisions }));
  return p;
}

/** `run --workspace --goal`, approving every write; returns the final status view. */
async function runToEnd(ws: string, replay: string, extra: string[] = []): Promise<{ code: number; out: string; view: Record<string, unknown> }> {
  // a task spec names the goal itself
  const goal = extra.includes("--task-spec") ? [] : ["--goal", "make the tests pass"];
  let r = await runClient(["run", "--workspace", ws, ...goal, "--replay", replay, ...extra, ...socket]);
  let out = r.stdout + r.stderr;
  const runId = /run (\S+) started/.exec(r.stdout)?.[1] ?? "";
  expect(runId, out).not.toBe("");
  const view = async () => JSON.parse((await runClient(["status", runId, "--json", ...socket])).stdout) as Record<string, unknown>;
  for (let i = 0; i < 5 && r.code === 3; i++) {
    r = await runClient(["approve", runId, String((await view()).action_id), ...socket]);
    out += r.stdout + r.stderr;
  }
  return { code: r.code, out, view: await view() };
}

/**
 * A package and what it loads at run time, copied from an install (`modules`, a node_modules
 * folder) into the project's node_modules: each dependency resolved as Node resolves it (the
 * requiring package's own node_modules first, then the top level), and every top-level folder
 * copied whole, so a nested copy comes along with its parent.
 */
function copyClosure(ws: string, root: string, modules = path.join(REPO, "node_modules")): void {
  const topLevel = new Set<string>();
  const seen = new Set<string>();
  const queue: Array<[string, string]> = [[root, modules]];
  while (queue.length > 0) {
    const [name, from] = queue.pop()!;
    let dir = "";
    for (let at = from; at.startsWith(modules); ) {
      if (fs.existsSync(path.join(at, name, "package.json"))) {
        dir = path.join(at, name);
        break;
      }
      if (at === modules) break;
      // up to the next enclosing node_modules (a scoped package sits two folders below it)
      do at = path.dirname(at);
      while (path.basename(at) !== "node_modules" && at.length > modules.length);
    }
    if (dir === "" || seen.has(dir)) continue;
    seen.add(dir);
    const top = path.relative(modules, dir).split(path.sep);
    topLevel.add(top[0]!.startsWith("@") ? `${top[0]}/${top[1]}` : top[0]!);
    const pkg = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")) as Record<string, Record<string, string> | undefined>;
    for (const dep of Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies })) queue.push([dep, path.join(dir, "node_modules")]);
  }
  for (const name of topLevel) fs.cpSync(path.join(modules, name), path.join(ws, "node_modules", name), { recursive: true, dereference: true });
}

/** vitest and what it loads at run time, copied from the shared install. */
const copyVitest = (ws: string) => copyClosure(ws, "vitest");

/**
 * jest comes from the project's own install (a devDependency); MINI_AGENT_TEST_JEST_MODULES names
 * another node_modules that has it. Its `.bin/jest` link is made as npm makes it: the shim starts
 * `#!/usr/bin/env node`, so running it needs /usr/bin/env in the image.
 */
const JEST_MODULES = process.env.MINI_AGENT_TEST_JEST_MODULES ?? path.join(REPO, "node_modules");
function copyJest(ws: string): void {
  expect(fs.existsSync(path.join(JEST_MODULES, "jest", "bin", "jest.js")), `jest is not installed in ${JEST_MODULES} (a devDependency: npm ci)`).toBe(true);
  copyClosure(ws, "jest", JEST_MODULES);
  fs.mkdirSync(path.join(ws, "node_modules", ".bin"), { recursive: true });
  fs.symlinkSync("../jest/bin/jest.js", path.join(ws, "node_modules", ".bin", "jest"));
}

const BUGGY_JS = "export function add(a, b) {\n  return a - b;\n}\n";
const VITEST_SUITE = `import { describe, expect, test } from "vitest";
import { add } from "../src/add.js";
describe("add", () => {
  test("adds", () => expect(add(2, 3)).toBe(5));
  test("is commutative", () => expect(add(4, 1)).toBe(add(1, 4)));
  test.each([[0, 0, 0], [1, -1, 0], [10, 5, 15]])("add(%i, %i) = %i", (a, b, sum) => expect(add(a, b)).toBe(sum));
});
`;

describe("ordinary suites run in the images, counted as the host counts them", () => {
  it("regression: a vitest project (rolldown's native binding needs librt.so.1) completes in the node image; it ended as '0/0 passed, runner exited 1'", async () => {
    const ws = project("vitest-proj", {
      "package.json": JSON.stringify({ name: "vitest-proj", type: "module", scripts: { test: "vitest run" } }),
      "src/add.js": BUGGY_JS,
      "test/add.test.js": VITEST_SUITE,
      ".gitignore": "node_modules/\n",
    });
    copyVitest(ws);
    const { code, out, view } = await runToEnd(ws, fixReplay("src/add.js", BUGGY_JS, "a - b", "a + b"));
    expect({ code, status: view.status }, out).toEqual({ code: 0, status: "completed" });
    const host = JSON.parse(execFileSync(process.execPath, ["node_modules/vitest/vitest.mjs", "run", "--reporter=json"], { cwd: ws, encoding: "utf8" })) as {
      numTotalTests: number;
      numPassedTests: number;
    };
    expect(host).toMatchObject({ numTotalTests: 5, numPassedTests: 5 });
    expect(view).toMatchObject({
      image_family: "node",
      verification: { passed: true, tests: { discovered: host.numTotalTests, passed: host.numPassedTests, failed: 0 } },
    });
  }, 600_000);

  it("regression: vitest failing a run outside its tests (an unhandled error; on a real project a typecheck that could not write into the read-only layer) left only 'the runner exited with code 1 though no test failed': what vitest said is now in the output status points to", async () => {
    const ws = project("vitest-unhandled", {
      "package.json": JSON.stringify({ name: "vitest-unhandled", type: "module", scripts: { test: "vitest run" } }),
      "src/add.js": BUGGY_JS,
      "test/add.test.js": `${VITEST_SUITE}setTimeout(() => { throw new Error("thrown-outside-any-test-7f3c"); }, 0);\n`,
      ".gitignore": "node_modules/\n",
    });
    copyVitest(ws);
    const { code, out, view } = await runToEnd(ws, fixReplay("src/add.js", BUGGY_JS, "a - b", "a + b"));
    expect({ code, status: view.status }, out).toEqual({ code: 1, status: "failed" });
    expect((view.verification as { details: string[] }).details.join("\n")).toMatch(/the runner exited with code 1 though no test failed/);
    const log = /test output \(Verifier, in full\): (\S+)/.exec(out)?.[1];
    expect(log, out).toBeDefined();
    expect(fs.readFileSync(log!, "utf8")).toContain("thrown-outside-any-test-7f3c");
    // and the client says it with the verdict, in vitest's own words
    expect(out).toMatch(/runner error: the runner exited with code 1 though no test failed\n(.*\n)*.*thrown-outside-any-test-7f3c/);
  }, 600_000);

  const BUGGY_CJS = "function add(a, b) {\n  return a - b;\n}\nmodule.exports = { add };\n";
  const JEST_SUITE = `const { add } = require("../src/add");
describe("add", () => {
  test("adds", () => expect(add(2, 3)).toBe(5));
  test("is commutative", () => expect(add(4, 1)).toBe(add(1, 4)));
  test.each([[0, 0, 0], [1, -1, 0], [10, 5, 15]])("add(%i, %i) = %i", (a, b, sum) => expect(add(a, b)).toBe(sum));
});
`;

  it("regression: a jest project whose test command is its node_modules/.bin/jest shim completes in the node image; the shim's `#!/usr/bin/env node` found no /usr/bin/env", async () => {
    const ws = project("jest-proj", {
      "package.json": JSON.stringify({ name: "jest-proj", private: true, scripts: { test: "jest" }, jest: { testEnvironment: "node" } }),
      "src/add.js": BUGGY_CJS,
      "test/add.test.js": JEST_SUITE,
      ".gitignore": "node_modules/\n",
    });
    copyJest(ws);
    // the task as drafted (package.json scripts.test: jest, read from its --json report), then run through the shim as a user's CI does
    const drafted = await runClient(["run", "--workspace", ws, "--goal", "make the tests pass", "--print-task", ...socket]);
    expect(drafted.code, drafted.stderr).toBe(0);
    const task = JSON.parse(drafted.stdout) as { verify_preset: string; test_presets: Record<string, { command: string[]; parser: string }> };
    const preset = task.test_presets[task.verify_preset]!;
    expect(preset).toMatchObject({
      parser: "jest_json",
      command: ["node", "node_modules/jest/bin/jest.js", "--ci", "--json", expect.stringMatching(/^--outputFile=/)],
    });
    preset.command = ["node_modules/.bin/jest", ...preset.command.slice(2)];
    const spec = path.join(tmp, "jest-task.json");
    fs.writeFileSync(spec, JSON.stringify(task));
    const { code, out, view } = await runToEnd(ws, fixReplay("src/add.js", BUGGY_CJS, "a - b", "a + b"), ["--task-spec", spec]);
    expect({ code, status: view.status }, out).toEqual({ code: 0, status: "completed" });
    const host = JSON.parse(
      execFileSync(process.execPath, ["node_modules/jest/bin/jest.js", "--ci", "--json"], { cwd: ws, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }),
    ) as { numTotalTests: number; numPassedTests: number };
    expect(host).toMatchObject({ numTotalTests: 5, numPassedTests: 5 });
    expect(view).toMatchObject({
      image_family: "node",
      verification: { passed: true, tests: { discovered: host.numTotalTests, passed: host.numPassedTests, failed: 0 } },
    });
  }, 600_000);

  it("regression: a jest suite printing past the run_tests capture cap (1 MiB) is judged by its complete report, and its full output is kept where status and trace point; only a tail was ever kept", async () => {
    const chatty = `${JEST_SUITE}test("prints a lot", () => {\n  for (let i = 0; i < 1536; i++) process.stdout.write(\`line \${i} \${"x".repeat(1010)}\\n\`);\n});\n`;
    const ws = project("jest-chatty", {
      "package.json": JSON.stringify({ name: "jest-chatty", private: true, scripts: { test: "jest" }, jest: { testEnvironment: "node" } }),
      "src/add.js": BUGGY_CJS,
      "test/add.test.js": chatty,
      ".gitignore": "node_modules/\n",
    });
    copyJest(ws);
    const { code, out, view } = await runToEnd(ws, fixReplay("src/add.js", BUGGY_CJS, "a - b", "a + b"));
    expect({ code, status: view.status }, out).toEqual({ code: 0, status: "completed" });
    // run_tests' capture was cut at 1 MiB; the report file counted all six tests, green
    expect(view).toMatchObject({ tests: { discovered: 6, passed: 6, failed: 0 }, verification: { passed: true, tests: { discovered: 6, passed: 6 } } });
    const files = view.test_output as { run_tests: string; verifier: string };
    const runTestsOut = fs.readFileSync(files.run_tests, "utf8");
    expect(runTestsOut.startsWith("line 0 ")).toBe(true);
    expect(runTestsOut).toMatch(/went over the capture cap here/);
    // the Verifier captures up to 16 MiB: all of it
    expect(fs.readFileSync(files.verifier, "utf8")).toContain(`line 1535 ${"x".repeat(1010)}`);
    const runId = String(view.run_id);
    for (const cmd of ["status", "trace"]) {
      const printed = (await runClient([cmd, runId, ...socket])).stdout;
      expect(printed).toContain(`test output (latest run_tests, in full): ${files.run_tests}`);
      expect(printed).toContain(`test output (Verifier, in full): ${files.verifier}`);
    }
  }, 600_000);

  const BUGGY_PY = "def add(a, b):\n    return a - b\n";
  const PY_TESTS =
    "import pytest\nfrom pkg.calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n\n@pytest.mark.parametrize('a,b', [(0, 0), (1, -1), (7, 8)])\ndef test_commutative(a, b):\n    assert add(a, b) == add(b, a)\n";
  /** what the host's pytest counts on the fixed tree, with src on the path the plain way (any pytest version) */
  const hostPytestCount = (ws: string): number => {
    const xml = path.join(tmp, `host-${crypto.randomUUID()}.xml`);
    execFileSync("python3", ["-m", "pytest", "-q", "-p", "no:cacheprovider", `--junitxml=${xml}`], {
      cwd: ws,
      stdio: "pipe",
      env: { ...process.env, PYTHONPATH: "src", PYTHONDONTWRITEBYTECODE: "1" },
    });
    return Number(/<testsuite [^>]*tests="(\d+)"/.exec(fs.readFileSync(xml, "utf8"))?.[1]);
  };

  it("a src-layout package with pythonpath and testpaths in [tool.pytest.ini_options] completes in the python image", async () => {
    const ws = project("py-src", {
      "pyproject.toml": '[project]\nname = "pkg"\nversion = "0.1.0"\n\n[tool.pytest.ini_options]\npythonpath = ["src"]\ntestpaths = ["tests"]\n',
      "src/pkg/__init__.py": "",
      "src/pkg/calc.py": BUGGY_PY,
      "tests/test_calc.py": PY_TESTS,
      // outside testpaths: collected only if testpaths were ignored, and it fails
      "scratch/test_never.py": "def test_never():\n    assert False\n",
    });
    const { code, out, view } = await runToEnd(ws, fixReplay("src/pkg/calc.py", BUGGY_PY, "a - b", "a + b"));
    expect({ code, status: view.status }, out).toEqual({ code: 0, status: "completed" });
    fs.rmSync(path.join(ws, "scratch"), { recursive: true });
    const host = hostPytestCount(ws);
    expect(host).toBe(4);
    expect(view).toMatchObject({ image_family: "python", verification: { passed: true, tests: { discovered: host, passed: host, failed: 0 } } });
  }, 600_000);

  // The draft itself gives a src layout without a pytest config `-o pythonpath=src` (its tests failed to import the
  // package: nothing is installed in the sandbox); a user's own `--test` saying the same is taken as written.
  it("regression: a src-layout project without a pytest config table completes, drafted (it failed every module with ModuleNotFoundError) and with `--test 'pytest -o pythonpath=src tests'` (pytest 7.2 died with AssertionError: inipath is None)", async () => {
    for (const [name, extra] of [
      ["py-src-drafted", []],
      ["py-override", ["--test", "pytest -o pythonpath=src tests"]],
    ] as const) {
      const ws = project(name, {
        "pyproject.toml": '[project]\nname = "pkg"\nversion = "0.1.0"\n',
        "src/pkg/__init__.py": "",
        "src/pkg/calc.py": BUGGY_PY,
        "tests/test_calc.py": PY_TESTS,
      });
      const { code, out, view } = await runToEnd(ws, fixReplay("src/pkg/calc.py", BUGGY_PY, "a - b", "a + b"), [...extra]);
      expect({ name, code, status: view.status }, out).toEqual({ name, code: 0, status: "completed" });
      const host = hostPytestCount(ws);
      expect(view).toMatchObject({ image_family: "python", verification: { passed: true, tests: { discovered: host, passed: host, failed: 0 } } });
    }
  }, 900_000);
});

/**
 * A real project as it is found: a flag-gated skipped test, a test that fails for reasons of
 * its own. The Verifier runs the same suite on the run's baseline and judges the result test
 * by test: what was there before is listed, not blamed; what the run broke, skipped or could
 * not load is named, through the real client.
 */
describe("judged against the baseline, test by test", () => {
  const CALC = "def add(a, b):\n    return a - b\n\ndef mul(a, b):\n    return a * b\n";
  const SUITE =
    "import os\nimport pytest\nfrom pkg.calc import add, mul\n\ndef test_add():\n    assert add(2, 3) == 5\n\ndef test_mul():\n    assert mul(2, 3) == 6\n\n" +
    "@pytest.mark.skipif(not os.environ.get('SLOW'), reason='set SLOW=1')\ndef test_slow():\n    assert mul(1000, 1000) == 10**6\n\n" +
    "def test_mul_zero():\n    assert mul(5, 0) == 0\n";
  const proj = (name: string) =>
    project(name, {
      "pyproject.toml": '[project]\nname = "pkg"\nversion = "0.1.0"\n\n[tool.pytest.ini_options]\npythonpath = ["src"]\ntestpaths = ["tests"]\n',
      "src/pkg/__init__.py": "",
      "src/pkg/calc.py": CALC,
      "tests/test_calc.py": SUITE,
    });
  const replayOf = (file: string, buggy: string, from: string, to: string) => fixReplay(file, buggy, from, to);
  const status = async (runId: string) => (await runClient(["status", runId, ...socket])).stdout;

  it("regression: a suite with a pre-existing skipped test completes (it failed as '3/4 passed' on a skip nobody added), the skip listed", async () => {
    const ws = proj("base-skip");
    const { code, out, view } = await runToEnd(ws, replayOf("src/pkg/calc.py", CALC, "a - b", "a + b"));
    expect({ code, status: view.status }, out).toEqual({ code: 0, status: "completed" });
    const tests = (view.verification as { tests: Record<string, unknown> }).tests;
    expect(tests).toMatchObject({
      discovered: 4,
      passed: 3,
      compare: {
        baseline: "compared",
        fail_to_pass: ["tests/test_calc.py::test_add"],
        skipped_before: ["tests/test_calc.py::test_slow"],
        skipped_new: [],
        pass_to_fail: [],
      },
    });
    const text = await status(String(view.run_id));
    expect(text).toMatch(/skipped_before \(1, skipped before the run and still skipped/);
    expect(text).toMatch(/fail_to_pass \(1, fixed/);
  }, 600_000);

  it("the same suite where the run adds a skip fails, naming the skipped test (skipped_new)", async () => {
    const ws = proj("add-skip");
    const { code, out, view } = await runToEnd(
      ws,
      replayOf("tests/test_calc.py", SUITE, "def test_add():", "@pytest.mark.skip(reason='later')\ndef test_add():"),
    );
    expect({ code, status: view.status }, out).toEqual({ code: 1, status: "failed" });
    const compare = (view.verification as { tests: { compare: Record<string, unknown> } }).tests.compare;
    expect(compare).toMatchObject({ skipped_new: ["tests/test_calc.py::test_add"], skipped_before: ["tests/test_calc.py::test_slow"] });
    expect(out).toMatch(/newly skipped \(tests\/test_calc\.py::test_add\)/);
  }, 600_000);

  it("a run that breaks an unrelated passing test fails, naming it (pass_to_fail)", async () => {
    const ws = proj("break-mul");
    // fixes add, and breaks mul's zero case on the way
    const both = CALC.replace("a - b", "a + b");
    const p = path.join(tmp, `replay-${crypto.randomUUID()}.json`);
    fs.writeFileSync(
      p,
      JSON.stringify({
        schema_version: 1,
        decisions: [
          {
            kind: "tool",
            call: { call_id: "c1", name: "apply_patch", arguments: { path: "src/pkg/calc.py", version: sha256(CALC), old: "a - b", new: "a + b" } },
          },
          {
            kind: "tool",
            call: { call_id: "c2", name: "apply_patch", arguments: { path: "src/pkg/calc.py", version: sha256(both), old: "a * b", new: "a * b or 1" } },
          },
          { kind: "final", text: "done" },
        ],
      }),
    );
    const { code, out, view } = await runToEnd(ws, p);
    expect({ code, status: view.status }, out).toEqual({ code: 1, status: "failed" });
    expect((view.verification as { tests: { compare: Record<string, unknown> } }).tests.compare).toMatchObject({
      pass_to_fail: ["tests/test_calc.py::test_mul_zero"],
      fail_to_pass: ["tests/test_calc.py::test_add"],
    });
    expect(out).toMatch(/1 passed before and fail now \(tests\/test_calc\.py::test_mul_zero\)/);
  }, 600_000);

  it("regression: a test file that could not load before the run (a dev dependency the sandbox lacks) stopped pytest ahead of every test and the run was 'verified' with 0/0; the other files now run and are judged, the broken one listed as failing before", async () => {
    const ws = project("dep-missing", {
      "pyproject.toml": '[project]\nname = "pkg"\nversion = "0.1.0"\n\n[tool.pytest.ini_options]\npythonpath = ["src"]\ntestpaths = ["tests"]\n',
      "src/pkg/__init__.py": "",
      "src/pkg/calc.py": CALC,
      "tests/test_calc.py": SUITE,
      "tests/test_frozen.py": "import freezegun_not_installed\n\ndef test_frozen():\n    assert True\n",
    });
    const { code, out, view } = await runToEnd(ws, replayOf("src/pkg/calc.py", CALC, "a - b", "a + b"));
    expect({ code, status: view.status }, out).toEqual({ code: 0, status: "completed" });
    expect((view.verification as { tests: Record<string, unknown> }).tests).toMatchObject({
      discovered: 4,
      passed: 3,
      compare: { fail_to_pass: ["tests/test_calc.py::test_add"], fail_to_fail: ["tests/test_frozen.py"], skipped_before: ["tests/test_calc.py::test_slow"] },
    });
    // the host's pytest, told to go on the same way, counts the same 4 tests beside the one file it could not load
    const xml = path.join(tmp, `host-${crypto.randomUUID()}.xml`);
    const host = spawnSync("python3", ["-m", "pytest", "-q", "-p", "no:cacheprovider", "--continue-on-collection-errors", `--junitxml=${xml}`], {
      cwd: ws,
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1" },
    });
    expect(host.status).toBe(1);
    const suite = /<testsuite [^>]*>/.exec(fs.readFileSync(xml, "utf8"))![0];
    expect({ tests: /tests="(\d+)"/.exec(suite)?.[1], errors: /errors="(\d+)"/.exec(suite)?.[1], skipped: /skipped="(\d+)"/.exec(suite)?.[1] }).toEqual({
      tests: "5",
      errors: "1",
      skipped: "1",
    });
  }, 600_000);

  it("a collection error is shown as one with the runner's own words, never as '0/N passed'", async () => {
    const ws = proj("collect-error");
    const { code, out, view } = await runToEnd(ws, replayOf("src/pkg/calc.py", CALC, "def add(a, b):", "import yaml_not_installed\n\ndef add(a, b):"));
    expect({ code, status: view.status }, out).toEqual({ code: 1, status: "failed" });
    const text = await status(String(view.run_id));
    expect(text).toMatch(/collection error/);
    expect(text).toMatch(/No module named 'yaml_not_installed'/);
    expect(text).not.toMatch(/0\/\d+ passed/);
  }, 600_000);
});

/**
 * A suite whose titles hold a random value or the time names other tests on every run (mocha's
 * is-number: `Math.random()` in three titles). The baseline runs twice; an id seen in only one of
 * those runs is unstable: reported, never "disappeared", and never able to hide a stable test the
 * run deleted.
 */
describe("a suite with linked fixtures", () => {
  it("regression: the baseline copy had no links, so the linked fixture's test failed on the baseline and the run was said to have fixed it (fail_to_pass); it passes on both sides now", async () => {
    const ws = project("linked-fixture", {
      "package.json": JSON.stringify({ name: "linked", type: "module", scripts: { test: "node --test tests/" } }),
      "src/add.js": BUGGY_JS,
      "tests/fixtures/data/greeting.txt": "hello",
      "tests/add.test.js": [
        'import test from "node:test";',
        'import assert from "node:assert/strict";',
        'import fs from "node:fs";',
        'import { add } from "../src/add.js";',
        'test("adds", () => assert.equal(add(2, 3), 5));',
        'test("reads the linked fixture", () => assert.equal(fs.readFileSync(new URL("./fixtures/link.txt", import.meta.url), "utf8"), "hello"));',
        "",
      ].join("\n"),
    });
    fs.symlinkSync("data/greeting.txt", path.join(ws, "tests/fixtures/link.txt"));
    git(ws, "add", "-A");
    git(ws, "commit", "-qm", "link");
    const { code, out, view } = await runToEnd(ws, fixReplay("src/add.js", BUGGY_JS, "a - b", "a + b"));
    expect({ code, status: view.status }, out).toEqual({ code: 0, status: "completed" });
    expect((view.verification as { tests: Record<string, unknown> }).tests).toMatchObject({
      discovered: 2,
      passed: 2,
      compare: { fail_to_pass: ["adds"], pass_to_pass: ["reads the linked fixture"] },
    });
  }, 600_000);
});

describe("test ids that change from run to run", () => {
  const SUITE = [
    'import test from "node:test";',
    'import assert from "node:assert/strict";',
    'import { add } from "../src/add.js";',
    'test("adds", () => assert.equal(add(2, 3), 5));',
    'test("is commutative", () => assert.equal(add(4, 1), add(1, 4)));',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the suite's own template literal, written out as source
    'test(`adds a random number ${Math.random()}`, () => assert.equal(typeof add(1, Math.random()), "number"));',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: as above
    "test(`made at ${Date.now()}`, () => assert.ok(add(0, 0) === 0));",
    "",
  ].join("\n");
  const proj = (name: string) =>
    project(name, {
      "package.json": JSON.stringify({ name, type: "module", scripts: { test: "node --test tests/" } }),
      "src/add.js": BUGGY_JS,
      "tests/add.test.js": SUITE,
    });
  type Compare = { disappeared: string[]; unstable?: string[]; new_passed: string[] };
  const compareOf = (view: Record<string, unknown>) => (view.verification as { tests: { compare: Compare } }).tests.compare;
  /** two runs of the baseline, two changing titles in each: four ids, none of them an ordinary test's */
  const expectUnstable = (c: Compare) => {
    expect(c.unstable).toHaveLength(4);
    expect(c.unstable?.filter((id) => /^(adds a random number 0\.\d+|made at \d+)$/.test(id))).toHaveLength(4);
  };

  it("regression: every test passed, yet the verdict failed with 'from before did not run' for titles holding Math.random() and Date.now(); it completes verified, those ids reported as unstable in the verdict, status and trace", async () => {
    const ws = proj("unstable-ids");
    const { code, out, view } = await runToEnd(ws, fixReplay("src/add.js", BUGGY_JS, "a - b", "a + b"));
    expect({ code, status: view.status }, out).toEqual({ code: 0, status: "completed" });
    const c = compareOf(view);
    expect(c.disappeared).toEqual([]);
    expectUnstable(c);
    expect(c.new_passed.filter((id) => !c.unstable?.includes(id))).toHaveLength(2);
    const host = execFileSync(process.execPath, ["--test", "tests/"], { cwd: ws, encoding: "utf8" });
    expect(/# pass (\d+)/.exec(host)?.[1]).toBe("4");
    expect(view).toMatchObject({ verification: { passed: true, tests: { discovered: 4, passed: 4, failed: 0 } } });
    expect(out).toContain(`${unstableSaid(4)}: `);
    const runId = String(view.run_id);
    expect((await runClient(["status", runId, ...socket])).stdout).toContain(`${unstableSaid(4)}: `);
    const events = (await runClient(["trace", runId, "--jsonl", ...socket])).stdout
      .split("\n")
      .filter(Boolean)
      .map((l) => readTraceEvent(JSON.parse(l)));
    const verdict = events.find((e) => e?.type === "verification_passed");
    expect(verdict?.type === "verification_passed" && verdict.payload.tests?.compare?.unstable).toEqual(c.unstable);
  }, 600_000);

  it("regression: a stable test the run deleted still fails the verdict, named alone as disappeared, beside the unstable ids", async () => {
    const ws = proj("unstable-deleted");
    const p = path.join(tmp, `replay-${crypto.randomUUID()}.json`);
    const patch = (id: string, file: string, text: string, old: string, now: string) => ({
      kind: "tool",
      call: { call_id: id, name: "apply_patch", arguments: { path: file, version: sha256(text), old, new: now } },
    });
    fs.writeFileSync(
      p,
      JSON.stringify({
        schema_version: 1,
        decisions: [
          patch("c1", "src/add.js", BUGGY_JS, "a - b", "a + b"),
          patch("c2", "tests/add.test.js", SUITE, 'test("is commutative", () => assert.equal(add(4, 1), add(1, 4)));\n', ""),
          { kind: "final", text: "done" },
        ],
      }),
    );
    const { code, out, view } = await runToEnd(ws, p);
    expect({ code, status: view.status }, out).toEqual({ code: 1, status: "failed" });
    const c = compareOf(view);
    expect(c.disappeared).toEqual(["is commutative"]);
    expectUnstable(c);
    expect(out).toMatch(/1 from before did not run \(is commutative\)/);
  }, 600_000);
});

/** `npm run <script> -- ARGS` as a user runs it: exit code and output, never a throw */
async function npmScript(file: string, args: string[]): Promise<{ code: number; out: string }> {
  try {
    const r = await promisify(execFile)(process.execPath, ["--import", "tsx", file, ...args], { cwd: REPO, maxBuffer: 32 << 20 });
    return { code: 0, out: r.stdout + r.stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === "number" ? e.code : -1, out: `${e.stdout ?? ""}${e.stderr ?? ""}` };
  }
}

describe("a custom image family FROM the node image", () => {
  const build = (name: string, dockerfile: string) =>
    npmScript("sandbox-image/build.ts", ["--family", name, "--dockerfile", dockerfile, "--state-dir", stateDir, "--quiet"]);
  const lockText = () => fs.readFileSync(path.join(stateDir, "sandbox-image.lock.json"), "utf8");

  it("is built from the user's Dockerfile, pinned with its base, proven by every probe, and a run in it uses its program", async () => {
    const ctx = path.join(tmp, "family-greet");
    fs.mkdirSync(ctx, { recursive: true });
    // a program with no shell behind it: the kernel starts node for the #! line
    fs.writeFileSync(path.join(ctx, "greet"), '#!/usr/bin/node\nprocess.stdout.write("hello " + (process.argv[2] ?? "world") + "\\n");\n', { mode: 0o755 });
    const write = (name: string, text: string) => {
      fs.writeFileSync(path.join(ctx, name), text);
      return path.join(ctx, name);
    };
    const before = lockText();
    const refused: Array<[string, string, RegExp]> = [
      [
        "greet",
        write("Dockerfile.other", "FROM alpine:3.19\nCOPY greet /usr/local/bin/greet\n"),
        /FROM alpine:3\.19 is not one of the pinned mini-agent family images.*FROM mini-agent\/sandbox-node:local/,
      ],
      ["greet", write("Dockerfile.root", "FROM mini-agent/sandbox-node:local\nUSER 0:0\n"), /the greet family is refused: it changes USER to "0:0"/],
      ["greet", write("Dockerfile.two", "FROM mini-agent/sandbox-node:local\nFROM mini-agent/sandbox-python:local\n"), /exactly one FROM/],
      [
        "node",
        write("Dockerfile.ok", "# a team's own tool\nFROM mini-agent/sandbox-node:local\nCOPY greet /usr/local/bin/greet\n"),
        /node is a built-in family/,
      ],
      ["Greet!", path.join(ctx, "Dockerfile.ok"), /is not a family name/],
    ];
    for (const [name, file, message] of refused) {
      const r = await build(name, file);
      expect({ code: r.code, out: r.out }).toMatchObject({ code: 64, out: expect.stringMatching(message) });
      expect(r.out).not.toMatch(/\n\s+at /); // no stack
    }
    expect(lockText()).toBe(before);

    const made = await build("greet", path.join(ctx, "Dockerfile.ok"));
    expect(made.code, made.out).toBe(0);
    const lock = await readImageLock(path.join(stateDir, "sandbox-image.lock.json"));
    expect(lock?.images.greet).toMatchObject({ tag: "mini-agent/sandbox-greet:local", base: "node", base_digest: lock?.images.node?.digest });
    // regression: the custom image inherited its base's inputs label, and the next node build reused it as the node image
    const again = await buildFamily(createDockerClient(process.env), "node");
    expect(again.digest).not.toBe(lock?.images.greet?.digest);

    const probe = await npmScript("probes/cli.ts", ["--json", "--family", "greet", "--state-dir", stateDir]);
    expect(probe.code, probe.out).toBe(0);
    const report = JSON.parse(probe.out.slice(probe.out.indexOf("{"), probe.out.lastIndexOf("}") + 1)) as {
      passed: boolean;
      image_family: string;
      image_digest: string;
      probes: Array<{ id: string; passed: boolean }>;
    };
    expect(report).toMatchObject({ passed: true, image_family: "greet", image_digest: lock?.images.greet?.digest });
    expect(report.probes.filter((p) => !p.passed)).toEqual([]);

    const TEST =
      'import test from "node:test";\nimport assert from "node:assert/strict";\nimport { execFileSync, spawnSync } from "node:child_process";\nimport { who } from "../src/who.js";\ntest("greets", () => assert.equal(execFileSync("greet", [who()], { encoding: "utf8" }), "hello team\\n"));\n';
    const BUGGY = 'export function who() {\n  return "nobody";\n}\n';
    const ws = project("greet-proj", {
      "package.json": JSON.stringify({ name: "greet-proj", type: "module", scripts: { test: "node --test tests/" } }),
      "src/who.js": BUGGY,
      "tests/test_greet.js": TEST,
    });
    const unknown = await runClient([
      "run",
      "--workspace",
      ws,
      "--goal",
      "g",
      "--image-family",
      "nosuch",
      "--replay",
      fixReplay("src/who.js", BUGGY, '"nobody"', '"team"'),
      ...socket,
    ]);
    expect({ code: unknown.code, err: unknown.stderr }).toMatchObject({
      code: 64,
      err: expect.stringMatching(/unknown_image_family: .*node, python, go, greet/),
    });
    const { code, out, view } = await runToEnd(ws, fixReplay("src/who.js", BUGGY, '"nobody"', '"team"'), ["--image-family", "greet"]);
    expect({ code, status: view.status }, out).toEqual({ code: 0, status: "completed" });
    expect(view).toMatchObject({ image_family: "greet", verification: { passed: true, tests: { discovered: 1, passed: 1, failed: 0 } } });
  }, 900_000);
});
