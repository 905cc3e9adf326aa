import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SandboxResult, SandboxRunRequest } from "../contracts/sandbox.js";
import { TaskSpec } from "../contracts/task-spec.js";
import type { PresetParser } from "../contracts/test-report.js";
import type { Executor } from "../sandbox/executor.js";
import { LocalExecutor } from "../sandbox/local-executor.js";
import { computeManifest, type Manifest } from "../workspace/manifest.js";
import { verify } from "./verify.js";
import { sandboxResult } from "../sandbox/result.testkit.js";

/**
 * The Verifier's rules for a task WITHOUT hidden acceptance (issue 11: ad-hoc
 * tasks): protected paths unchanged, the diff not empty (else `no_changes`,
 * the first reason), and the verify preset read by its own parser and judged
 * by the one rule. Real host processes (LocalExecutor) run the node:test and
 * exit-code presets; a scripted executor hands a JUnit report over where the
 * point is the parser, not the sandbox (tests/tools/report-formats.test.ts
 * reads real reports back from real containers).
 */
const TEST_FILE = 'import test from "node:test";\ntest("a", () => {});\ntest("b", () => {});\n';
const FAILING = 'import test from "node:test";\nimport assert from "node:assert";\ntest("a", () => assert.equal(1, 2));\n';

function taskWith(parser: PresetParser, command: string[], files: string[], acceptance = false) {
  return TaskSpec.parse({
    schema_version: 1,
    name: "adhoc",
    task: "make it work",
    writable: ["src/**"],
    creatable: [],
    test_presets: { verify: { command, files, parser } },
    verify_preset: "verify",
    ...(acceptance && { acceptance: { command: ["node", "/control/a.js"], cases: ["c1"], expected: { c1: [] } } }),
  });
}
const NODE_TASK = taskWith("node_test", ["node", "--test", "--test-reporter=tap"], ["tests/*.test.mjs"]);

let root: string;
let ws: string;
let baseline: Manifest;

beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), "verify-noacc-"));
  ws = path.join(root, "ws");
  await fs.mkdir(path.join(ws, "src"), { recursive: true });
  await fs.mkdir(path.join(ws, "tests"), { recursive: true });
  await fs.writeFile(path.join(ws, "src", "x.mjs"), "export const x = 1;\n");
  await fs.writeFile(path.join(ws, "tests", "x.test.mjs"), TEST_FILE);
  baseline = await computeManifest(ws);
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

const change = () => fs.writeFile(path.join(ws, "src", "x.mjs"), "export const x = 2;\n");
const run = (task: TaskSpec, executor: Executor = new LocalExecutor({ tmpRoot: root })) =>
  verify({ runId: "run-1", task, workspaceRoot: ws, baseline, acceptanceDir: null, executor });

describe("verify without hidden acceptance", () => {
  it("a run that changed something with every test passing is verified", async () => {
    await change();
    const ev = await run(NODE_TASK);
    expect(ev).toMatchObject({ passed: true, reason: null, changed_path_count: 1, acceptance: null, tests: { discovered: 2, passed: 2, failed: 0 } });
  });

  it("regression: a run that changed nothing passed on green tests alone; it fails as no_changes, first, with the tests still run", async () => {
    const ev = await run(NODE_TASK);
    expect(ev).toMatchObject({ passed: false, reason: "no_changes", changed_path_count: 0, tests: { discovered: 2, passed: 2, exit_code: 0 } });
    expect(ev.details?.[0]).toMatch(/changed nothing/);
  });

  it("no_changes stays the first reason when the tests fail too, and the failure is still in the evidence", async () => {
    await fs.writeFile(path.join(ws, "tests", "x.test.mjs"), FAILING);
    baseline = await computeManifest(ws);
    const ev = await run(NODE_TASK);
    expect(ev).toMatchObject({ passed: false, reason: "no_changes", tests: { discovered: 1, failed: 1, exit_code: 1 } });
    expect(ev.details).toContainEqual(expect.stringMatching(/^candidate tests: 1 of 1 tests failed/));
  });

  it("a change to a protected path is protected_path_changed (the change is not 'no changes')", async () => {
    await fs.appendFile(path.join(ws, "tests", "x.test.mjs"), "// edited\n");
    const ev = await run(NODE_TASK);
    expect(ev).toMatchObject({ passed: false, reason: "protected_path_changed", protected_paths_changed: ["tests/x.test.mjs"] });
  });

  it("with 0 tests discovered it is a false green even though the workspace changed", async () => {
    await change();
    const ev = await run(taskWith("node_test", ["node", "--test", "--test-reporter=tap"], ["src/*.mjs"]));
    expect(ev).toMatchObject({ passed: false, reason: "false_green" });
  });

  it("a task WITH hidden acceptance keeps its rules: changing nothing is not no_changes there (its hidden cases decide)", async () => {
    const acceptanceTask = taskWith("node_test", ["node", "--test", "--test-reporter=tap"], ["tests/*.test.mjs"], true);
    const control = path.join(root, "control");
    await fs.mkdir(control);
    const answer = { schema_version: 1, cases: [{ id: "c1", passed: true, actual: [], error: null }] };
    await fs.writeFile(path.join(control, "a.js"), `console.log(${JSON.stringify(JSON.stringify(answer))});\n`);
    const ev = await verify({
      runId: "run-1",
      task: acceptanceTask,
      workspaceRoot: ws,
      baseline,
      acceptanceDir: control,
      executor: new LocalExecutor({ tmpRoot: root }),
    });
    expect(ev).toMatchObject({ passed: true, reason: null, changed_path_count: 0, acceptance: { passed: ["c1"], failed: [] } });
  });
});

describe("verify with an exit_code preset (real host process)", () => {
  it("exit 0 and a change: verified, and the evidence says it was exit code only in the verdict's exact words", async () => {
    await change();
    const ev = await run(taskWith("exit_code", ["node", "-e", "process.exit(0)"], []));
    expect(ev).toMatchObject({ passed: true, reason: null, tests: { exit_code: 0, exit_code_only: true } });
    expect(ev.details).toContain("candidate tests: tests passed by exit code only; no test count was available");
  });

  it("exit 1 is verification_failed, naming the exit code", async () => {
    await change();
    const ev = await run(taskWith("exit_code", ["node", "-e", "process.exit(1)"], []));
    expect(ev).toMatchObject({ passed: false, reason: "verification_failed", tests: { exit_code: 1, exit_code_only: true } });
    expect(ev.details).toContainEqual(expect.stringMatching(/exited with code 1 \(exit code only/));
  });

  it("a node_test preset's evidence carries no exit_code_only flag", async () => {
    await change();
    expect((await run(NODE_TASK)).tests).not.toHaveProperty("exit_code_only");
  });
});

class ReportExecutor implements Executor {
  readonly kind = "container" as const;
  readonly requests: SandboxRunRequest[] = [];
  constructor(private readonly res: Partial<SandboxResult>) {}
  async run(req: SandboxRunRequest): Promise<SandboxResult> {
    this.requests.push(req);
    return sandboxResult(this.res);
  }
  async openSession(): Promise<never> {
    throw new Error("the verifier must never use a warm session");
  }
  async describe() {
    return { runtime: "runc" as const, imageDigest: null, engineVersion: null };
  }
  async preflight(): Promise<void> {}
}

describe("verify with a junit_xml preset", () => {
  const PYTEST = taskWith("junit_xml", ["python3", "-m", "pytest", "--junitxml=/tmp/mini-agent-junit.xml"], []);
  const report = (cases: string) => ({
    status: "read" as const,
    bytes: Buffer.from(`<testsuites><testsuite name="pytest">${cases}</testsuite></testsuites>`),
  });

  it("asks the fresh sandbox for the report file and judges what it read", async () => {
    await change();
    const ex = new ReportExecutor({ report: report('<testcase name="a"/><testcase name="b"/>') });
    const ev = await run(PYTEST, ex);
    expect(ev).toMatchObject({ passed: true, tests: { discovered: 2, passed: 2, failed: 0 } });
    expect(ex.requests[0]).toMatchObject({ purpose: "verifier", reportFile: { path: "/tmp/mini-agent-junit.xml", maxBytes: 16_777_216 } });
  });

  it("an <error> case counts as failed; a skipped case blocks green exactly as in run_tests", async () => {
    await change();
    const err = await run(
      PYTEST,
      new ReportExecutor({ exit_code: 1, report: report('<testcase name="a"/><testcase name="b"><error message="boom"/></testcase>') }),
    );
    expect(err).toMatchObject({ passed: false, reason: "verification_failed", tests: { discovered: 2, passed: 1, failed: 1 } });
    const skip = await run(PYTEST, new ReportExecutor({ report: report('<testcase name="a"/><testcase name="b"><skipped/></testcase>') }));
    expect(skip).toMatchObject({ passed: false, reason: "verification_failed" });
    expect(skip.details).toContainEqual(expect.stringMatching(/1 skipped and 0 todo do not count as passed/));
  });

  it("a missing report with exit 0 is a false green", async () => {
    await change();
    const ev = await run(PYTEST, new ReportExecutor({ report: { status: "missing" } }));
    expect(ev).toMatchObject({ passed: false, reason: "false_green" });
  });

  it("on trusted_local it is verification_error:report_file_unsupported, never a read of the host's /tmp", async () => {
    await change();
    const ev = await run(taskWith("junit_xml", ["node", "-e", "process.exit(0)"], []));
    expect(ev).toMatchObject({ passed: false, reason: "verification_error:report_file_unsupported" });
  });
});

describe("verify with hidden tests and SWE-bench lists (real host process)", () => {
  const hiddenTask = (over: Record<string, unknown>) => TaskSpec.parse({ ...NODE_TASK, hidden_tests: "hidden_tests", ...over });
  const runWith = (task: TaskSpec, acceptanceDir: string | null) =>
    verify({ runId: "run-1", task, workspaceRoot: ws, baseline, acceptanceDir, executor: new LocalExecutor({ tmpRoot: root }) });
  let control: string;
  beforeEach(async () => {
    control = path.join(root, "control");
    await fs.mkdir(path.join(control, "hidden_tests", "tests"), { recursive: true });
    await fs.writeFile(path.join(control, "hidden_tests", "tests", "x.test.mjs"), FAILING);
  });

  it("the hidden tests replace the workspace's in the Verifier's sandbox, and never enter the workspace", async () => {
    await change();
    const ev = await runWith(hiddenTask({}), control);
    // the workspace's own test passes twice; the hidden one fails once: the Verifier ran the hidden one
    expect(ev).toMatchObject({ passed: false, reason: "verification_failed", tests: { discovered: 1, failed: 1 } });
    expect(await fs.readFile(path.join(ws, "tests", "x.test.mjs"), "utf8")).toBe(TEST_FILE);
  });

  it("regression: a hidden test file the workspace does not have was never run by a preset naming its files (the globs were expanded over the workspace only)", async () => {
    await change();
    await fs.rm(path.join(control, "hidden_tests", "tests", "x.test.mjs"));
    await fs.writeFile(path.join(control, "hidden_tests", "tests", "new.test.mjs"), FAILING);
    const ev = await runWith(hiddenTask({}), control);
    expect(ev).toMatchObject({ passed: false, reason: "verification_failed", tests: { discovered: 3, passed: 2, failed: 1 } });
    await expect(fs.access(path.join(ws, "tests", "new.test.mjs"))).rejects.toThrow();
  });

  it("a task whose hidden_tests folder is missing (or a link out of the control dir) fails as verification_error, never judged without them", async () => {
    await change();
    expect(await runWith(hiddenTask({}), null)).toMatchObject({ passed: false, reason: "verification_error:hidden_tests_missing" });
    await fs.rm(path.join(control, "hidden_tests"), { recursive: true });
    await fs.symlink(path.join(root, "ws"), path.join(control, "hidden_tests"));
    expect(await runWith(hiddenTask({}), control)).toMatchObject({ passed: false, reason: "verification_error:hidden_tests_missing" });
  });

  it("FAIL_TO_PASS ids the result does not name fail the run, named in the details and in compare.required", async () => {
    await change();
    const task = TaskSpec.parse({ ...NODE_TASK, FAIL_TO_PASS: ["tests/x.test.mjs::a"], PASS_TO_PASS: ["tests/x.test.mjs::b"] });
    const ev = await runWith(task, null);
    expect(ev).toMatchObject({ passed: false, reason: "verification_failed" });
    expect(ev.tests.compare?.required).toEqual({
      fail_to_pass: { success: [], failure: ["tests/x.test.mjs::a"] },
      pass_to_pass: { success: [], failure: ["tests/x.test.mjs::b"] },
    });
    expect(ev.details).toContain("required tests: FAIL_TO_PASS 1 not passing: tests/x.test.mjs::a; PASS_TO_PASS 1 not passing: tests/x.test.mjs::b");
  });
});
