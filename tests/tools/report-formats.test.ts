// Real Docker: the three report formats and exit-code-only presets end to end through the
// sandbox (issue 11). pytest writes its JUnit report in the sandbox's /tmp and the executor
// reads it back (`run --read-report`); `go test -json` is read from stdout. Each family runs
// in ONE warm session for run_tests (several commands per container) and in a few fresh
// sandboxes for the Verifier. Generous timeouts: the engine and the 2 cores are shared.
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SandboxResult } from "../../daemon/src/contracts/sandbox.js";
import type { ToolResult } from "../../daemon/src/contracts/tool-call.js";
import { DockerExecutor } from "../../daemon/src/sandbox/docker-executor.js";
import type { SandboxSession } from "../../daemon/src/sandbox/executor.js";
import { runTests } from "../../daemon/src/tools/run-tests.js";
import { tempRun, type TempRun } from "../../daemon/src/tools/workspace.testkit.js";
import { verify } from "../../daemon/src/verifier/verify.js";
import { computeManifest } from "../../daemon/src/workspace/manifest.js";
import { pinTestImage } from "../kit/sandbox-image.js";
import { availableRuntimes, docker, leftoversWithPrefix, removeWithPrefix, runIdPrefix } from "../sandbox/helpers.js";

const prefix = runIdPrefix("reports");
let stateDir: string;
let lockPath: string;
const runs: TempRun[] = [];
const LONG = 600_000;

beforeAll(async () => {
  stateDir = await fs.mkdtemp(path.join(os.tmpdir(), "mini-agent-reports-"));
  lockPath = path.join(stateDir, "sandbox-image.lock.json");
  await pinTestImage(lockPath, "python", docker);
  await pinTestImage(lockPath, "go", docker);
  await pinTestImage(lockPath, "node", docker);
}, 900_000);

afterAll(async () => {
  const left = await leftoversWithPrefix(prefix);
  await removeWithPrefix(prefix);
  for (const r of runs) await r.cleanup();
  await fs.rm(stateDir, { recursive: true, force: true });
  expect(left).toEqual({ containers: [], volumes: [] });
});

const executorFor = (family: "python" | "go" | "node", runtime: "runc" | "runsc" = "runc") =>
  new DockerExecutor({ lockPath, docker, config: { imageFamily: family, runtime } });

const REPORT = "/tmp/mini-agent-junit.xml";
const PYTEST = ["python3", "-m", "pytest", `--junitxml=${REPORT}`, "-p", "no:cacheprovider", "-q"];
const CALC = "def add(a, b):\n    return a + b\n";
const GREEN_TESTS = "from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n\ndef test_zero():\n    assert add(0, 0) == 0\n";
// one pass, one failure, one error (its fixture raises), one skip
const MIXED_TESTS =
  "import pytest\nfrom calc import add\n\n@pytest.fixture\ndef broken():\n    raise RuntimeError('fixture boom')\n\n" +
  "def test_ok():\n    assert add(1, 1) == 2\n\ndef test_wrong():\n    assert add(2, 2) == 5, 'two and two'\n\n" +
  "def test_error(broken):\n    pass\n\n@pytest.mark.skip(reason='later')\ndef test_skipped():\n    pass\n";
const SKIP_ONLY_EXTRA = "import pytest\n\n@pytest.mark.skip(reason='later')\ndef test_later():\n    pass\n";

function pythonTask(extraPresets: Record<string, unknown> = {}) {
  return {
    schema_version: 1,
    name: "calc",
    task: "make add work",
    writable: ["calc.py", "tests/**"],
    creatable: ["tests/test_*.py"],
    test_presets: {
      pytest: { command: PYTEST, files: ["tests/test_*.py"], parser: "junit_xml", timeout_seconds: 300 },
      exit_ok: { command: ["python3", "-c", "import sys; sys.exit(0)"], files: [], parser: "exit_code", timeout_seconds: 120 },
      exit_bad: { command: ["python3", "-c", "import sys; sys.exit(4)"], files: [], parser: "exit_code", timeout_seconds: 120 },
      // a junit_xml preset whose command writes no report (the stale-report check)
      silent: { command: ["python3", "-c", "print('no report written')"], files: [], parser: "junit_xml", timeout_seconds: 120 },
      ...extraPresets,
    },
    verify_preset: "pytest",
  };
}

const data = (r: ToolResult) => r.data as Record<string, unknown>;

describe("python family: pytest's JUnit report through run_tests (one warm session)", () => {
  let run: TempRun;
  let session: SandboxSession;
  const call = (preset: string) => runTests("c", { preset }, { ...run.ctx, runner: session, runId: `${prefix}-py-warm`, timeoutMs: 300_000 });

  beforeAll(async () => {
    run = await tempRun({ "calc.py": CALC, "tests/test_calc.py": GREEN_TESTS }, pythonTask());
    runs.push(run);
    session = await executorFor("python").openSession(`${prefix}-py-warm`);
  }, LONG);
  afterAll(async () => session?.close());

  it("green: 2 tests read from the report file, ok", { timeout: LONG }, async () => {
    const r = await call("pytest");
    expect(r, JSON.stringify(r.data)).toMatchObject({ ok: true, data: { parser: "junit_xml", discovered: 2, passed: 2, failed: 0, errors: 0, green: true } });
  });

  it("red: a failing test, an error and a skip are counted from the report, with the failure named", { timeout: LONG }, async () => {
    await fs.writeFile(path.join(run.ws, "tests", "test_calc.py"), MIXED_TESTS);
    const r = await call("pytest");
    expect(r, JSON.stringify(r.data)).toMatchObject({
      ok: false,
      error: { code: "tests_failed" },
      data: { discovered: 4, passed: 1, failed: 2, errors: 1, skipped: 1, green: false },
    });
    const names = (data(r).diagnostics as Array<{ name: string; message: string }>).map((d) => d.name).join(" ");
    expect(names).toMatch(/test_wrong/);
    expect(names).toMatch(/test_error/);
  });

  it("a skipped test among passing ones is not green (the one rule, through the sandbox)", { timeout: LONG }, async () => {
    await fs.writeFile(path.join(run.ws, "tests", "test_calc.py"), GREEN_TESTS);
    await fs.writeFile(path.join(run.ws, "tests", "test_later.py"), SKIP_ONLY_EXTRA);
    const r = await call("pytest");
    expect(r).toMatchObject({ ok: false, data: { discovered: 3, passed: 2, skipped: 1, green: false } });
    expect(r.error?.message).toMatch(/1 skipped and 0 todo do not count as passed/);
    await fs.rm(path.join(run.ws, "tests", "test_later.py"));
  });

  it("regression: the previous command's report is never read as this one's: a command that writes none -> missing, a false green", {
    timeout: LONG,
  }, async () => {
    expect(await call("pytest")).toMatchObject({ ok: true });
    const r = await call("silent");
    expect(r).toMatchObject({ ok: false, data: { refusal: "missing", discovered: 0, exit_code: 0, green: false } });
    expect(r.error?.message).toMatch(/no report file/);
  });

  it("exit_code presets: exit 0 passes with the weaker verdict and no count, exit 4 fails", { timeout: LONG }, async () => {
    const ok = await call("exit_ok");
    expect(ok).toMatchObject({ ok: true, data: { exit_code_only: true, verdict: "tests passed by exit code only; no test count was available" } });
    expect(data(ok)).not.toHaveProperty("discovered");
    const bad = await call("exit_bad");
    expect(bad).toMatchObject({ ok: false, error: { code: "tests_failed" }, data: { exit_code_only: true, exit_code: 4 } });
  });
});

// what each command leaves at the report path, and what reading it back must give
const WRITE = (code: string) => ["python3", "-c", code];
const EDGE_CASES: Array<[string, string[], number, (r: SandboxResult) => void]> = [
  [
    "a report's exact bytes (binary-safe: NUL and a byte that is not UTF-8)",
    WRITE(`open('${REPORT}','wb').write(b'<a>\\x00\\xff\\xfe</a>')`),
    1000,
    (r) => expect(r.report).toEqual({ status: "read", bytes: new Uint8Array([...Buffer.from("<a>"), 0, 0xff, 0xfe, ...Buffer.from("</a>")]) }),
  ],
  ["the next command wrote none: missing, not the stale one", WRITE("pass"), 1000, (r) => expect(r.report).toEqual({ status: "missing" })],
  [
    "a symlink at the path (to a real report): unreadable, never followed",
    WRITE(`import os; open('/tmp/real.xml','w').write('<testsuites/>'); os.symlink('/tmp/real.xml', '${REPORT}')`),
    1000,
    (r) => expect(r.report).toMatchObject({ status: "unreadable", reason: expect.stringMatching(/symbolic link/) }),
  ],
  [
    "a FIFO at the path: unreadable, without hanging",
    WRITE(`import os; os.mkfifo('${REPORT}')`),
    1000,
    (r) => expect(r.report).toMatchObject({ status: "unreadable", reason: "not a regular file" }),
  ],
  [
    "a directory at the path: unreadable",
    WRITE(`import os; os.mkdir('${REPORT}')`),
    1000,
    (r) => expect(r.report).toMatchObject({ status: "unreadable", reason: "not a regular file" }),
  ],
  [
    "one byte over the cap: too_large with its size",
    WRITE(`open('${REPORT}','wb').write(b'x' * 1001)`),
    1000,
    (r) => expect(r.report).toEqual({ status: "too_large", size: 1001 }),
  ],
  [
    "8 MiB against a 2 MiB cap: too_large, never read whole (the capture would cut it)",
    WRITE(`open('${REPORT}','wb').write(b'x' * (8 << 20))`),
    2 << 20,
    (r) => expect(r.report).toEqual({ status: "too_large", size: 8 << 20 }),
  ],
];

describe("reading the report file back: edge cases, one warm sandbox per runtime", async () => {
  for (const runtime of await availableRuntimes()) {
    it(`${runtime}: every case in order in one warm sandbox`, { timeout: LONG }, async () => {
      const run = await tempRun({}, pythonTask());
      runs.push(run);
      const session = await executorFor("python", runtime).openSession(`${prefix}-edges-${runtime}`);
      try {
        for (const [what, argv, maxBytes, check] of EDGE_CASES) {
          const res = await session.exec({
            purpose: "candidate",
            argv,
            workspaceDir: run.ws,
            timeoutMs: 120_000,
            reportFile: { path: REPORT, maxBytes },
          });
          expect(res.exit_code, `${what}: ${res.stderr}`).toBe(0);
          check(res);
        }
      } finally {
        await session.close();
      }
    });
  }
});

describe("python family: the Verifier reads the report in a fresh sandbox (task without acceptance)", () => {
  it("green after a change: verified; red: verification_failed with the report's counts", { timeout: LONG }, async () => {
    const run = await tempRun({ "calc.py": "def add(a, b):\n    return a - b\n", "tests/test_calc.py": GREEN_TESTS }, pythonTask());
    runs.push(run);
    const baseline = await computeManifest(run.ws);
    const task = run.ctx.task;
    const ex = executorFor("python");
    const verifyNow = () => verify({ runId: `${prefix}-py-verify`, task, workspaceRoot: run.ws, baseline, acceptanceDir: null, executor: ex });

    await fs.writeFile(path.join(run.ws, "calc.py"), CALC);
    const green = await verifyNow();
    expect(green, JSON.stringify(green.details)).toMatchObject({ passed: true, reason: null, tests: { discovered: 2, passed: 2, failed: 0, exit_code: 0 } });

    await fs.writeFile(path.join(run.ws, "tests", "test_calc.py"), MIXED_TESTS);
    const red = await verifyNow();
    // a failure, an error and a skip, read as run_tests reads them
    expect(red).toMatchObject({ passed: false, reason: "verification_failed" });
    expect(red.tests).toMatchObject({ discovered: 4, passed: 1, failed: 2, exit_code: 1 });
    expect(red.details).toContainEqual(expect.stringMatching(/^candidate tests: 2 of 4 tests failed/));
  });

  it("a task without acceptance whose run changed nothing is no_changes, with the tests' evidence complete", { timeout: LONG }, async () => {
    const run = await tempRun({ "calc.py": CALC, "tests/test_calc.py": GREEN_TESTS }, pythonTask());
    runs.push(run);
    const ev = await verify({
      runId: `${prefix}-py-nochange`,
      task: run.ctx.task,
      workspaceRoot: run.ws,
      baseline: await computeManifest(run.ws),
      acceptanceDir: null,
      executor: executorFor("python"),
    });
    expect(ev).toMatchObject({ passed: false, reason: "no_changes", changed_path_count: 0, tests: { discovered: 2, passed: 2, exit_code: 0 } });
  });
});

const GO_MOD = "module example.com/calc\n\ngo 1.19\n";
const GO_CALC = "package calc\n\nfunc Add(a, b int) int { return a + b }\n";
const goTest = (want: number) =>
  `package calc\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(2, 3); got != ${want} {\n\t\tt.Fatalf("Add(2, 3) = %d, want ${want}", got)\n\t}\n}\n\nfunc TestZero(t *testing.T) {\n\tif Add(0, 0) != 0 {\n\t\tt.Fatal("zero")\n\t}\n}\n`;
const GO_TASK = {
  schema_version: 1,
  name: "calc-go",
  task: "make Add work",
  writable: ["*.go"],
  creatable: [],
  test_presets: { gotest: { command: ["go", "test", "-json", "./..."], files: [], parser: "go_test_json", timeout_seconds: 300 } },
  verify_preset: "gotest",
};

describe("go family: go test -json through run_tests (one warm session) and the Verifier", () => {
  it("green, red, and a build failure: a load error (not a test) whose compiler message is shown", { timeout: LONG }, async () => {
    const run = await tempRun({ "go.mod": GO_MOD, "calc.go": GO_CALC, "calc_test.go": goTest(5) }, GO_TASK);
    runs.push(run);
    const session = await executorFor("go").openSession(`${prefix}-go-warm`);
    const call = () => runTests("c", { preset: "gotest" }, { ...run.ctx, runner: session, runId: `${prefix}-go-warm`, timeoutMs: 300_000 });
    try {
      const green = await call();
      expect(green, JSON.stringify(green.data)).toMatchObject({ ok: true, data: { parser: "go_test_json", discovered: 2, passed: 2, green: true } });

      await fs.writeFile(path.join(run.ws, "calc_test.go"), goTest(6));
      const red = await call();
      expect(red).toMatchObject({ ok: false, error: { code: "tests_failed" }, data: { discovered: 2, passed: 1, failed: 1 } });
      expect((data(red).diagnostics as Array<{ message: string }>)[0]?.message).toMatch(/Add\(2, 3\) = 5, want 6/);

      await fs.writeFile(path.join(run.ws, "calc.go"), 'package calc\n\nfunc Add(a, b int) int { return "not an int" }\n');
      const broken = await call();
      expect(broken, JSON.stringify(broken.data)).toMatchObject({
        ok: false,
        error: { code: "tests_failed" },
        data: { discovered: 0, failed: 0, load_error_count: 1, build_failed: ["example.com/calc"] },
      });
      expect((data(broken).load_errors as Array<{ message: string }>)[0]?.message).toMatch(/failed to build[\s\S]*calc\.go:3:\d+: .*not an int/);
    } finally {
      await session.close();
    }
  });

  it("the Verifier judges the same stream in a fresh sandbox: verified after a fix", { timeout: LONG }, async () => {
    const run = await tempRun({ "go.mod": GO_MOD, "calc.go": "package calc\n\nfunc Add(a, b int) int { return a * b }\n", "calc_test.go": goTest(5) }, GO_TASK);
    runs.push(run);
    const baseline = await computeManifest(run.ws);
    await fs.writeFile(path.join(run.ws, "calc.go"), GO_CALC);
    const ev = await verify({
      runId: `${prefix}-go-verify`,
      task: run.ctx.task,
      workspaceRoot: run.ws,
      baseline,
      acceptanceDir: null,
      executor: executorFor("go"),
    });
    expect(ev, JSON.stringify(ev.details)).toMatchObject({ passed: true, reason: null, tests: { discovered: 2, passed: 2, failed: 0, exit_code: 0 } });
  });
});

// A suite of 7,000 tests that prints ~3 MB: its count comes from its report (pytest's JUnit
// file; node's TAP, which is its stdout and may be as large as a report file), never from a
// cut stream. One run per family, each in a fresh sandbox as the Verifier runs it.
describe("a 7,000-test suite printing 3 MB is counted exactly from its report", () => {
  const N = 7_000;
  const LINE = "x".repeat(440);

  it("pytest (junit_family=xunit1, -s so the prints reach stdout): 7,000 passed, green though stdout was cut", { timeout: LONG }, async () => {
    const loud = ["python3", "-m", "pytest", "-s", "-p", "no:cacheprovider", "-q", "-o", "junit_family=xunit1", `--junitxml=${REPORT}`];
    const big = `import pytest\n\n@pytest.mark.parametrize("n", range(${N}))\ndef test_n(n):\n    print("${LINE}")\n`;
    const run = await tempRun(
      { "calc.py": CALC, "tests/test_big.py": big },
      pythonTask({ loud: { command: loud, files: ["tests/test_big.py"], parser: "junit_xml", timeout_seconds: 600 } }),
    );
    runs.push(run);
    const r = await runTests("c", { preset: "loud" }, { ...run.ctx, runner: executorFor("python"), runId: `${prefix}-py-7000`, timeoutMs: 600_000 });
    expect(r.data, JSON.stringify({ ...data(r), output: undefined })).toMatchObject({ discovered: N, passed: N, failed: 0, load_error_count: 0, green: true });
    // the runner's stdout (3 MB) was cut at the runner cap; the report file was read whole
    expect(data(r).truncated).toBe(true);
    expect(r.ok).toBe(true);
  });

  it("node --test (TAP on stdout): 7,000 passed, nothing cut", { timeout: LONG }, async () => {
    const big = `const test = require("node:test");\nfor (let i = 0; i < ${N}; i++) test(\`t \${i}\`, () => { console.log("${LINE}"); });\n`;
    const task = {
      ...pythonTask(),
      writable: ["tests/**"],
      test_presets: { node: { command: ["node", "--test", "--test-reporter=tap"], files: ["tests/*.js"], parser: "node_test", timeout_seconds: 600 } },
      verify_preset: "node",
    };
    const run = await tempRun({ "package.json": "{}", "tests/big.js": big }, task);
    runs.push(run);
    const r = await runTests("c", { preset: "node" }, { ...run.ctx, runner: executorFor("node"), runId: `${prefix}-node-7000`, timeoutMs: 600_000 });
    expect(r.data, JSON.stringify({ ...data(r), output: undefined })).toMatchObject({ discovered: N, passed: N, failed: 0, truncated: false, green: true });
    expect(r.ok).toBe(true);
  });
});
