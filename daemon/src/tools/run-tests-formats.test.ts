import { afterEach, describe, expect, it } from "vitest";
import type { SandboxResult, SandboxRunRequest } from "../contracts/sandbox.js";
import type { PresetParser } from "../contracts/test-report.js";
import type { Executor } from "../sandbox/executor.js";
import { LocalExecutor } from "../sandbox/local-executor.js";
import { DEFAULT_TOOL_LIMITS } from "./limits.js";
import { goStderr, sampleBytes, sampleText } from "./parsers/samples.testkit.js";
import { reportFileFor, runTests, summarizeTestRun } from "./run-tests.js";
import { SMALL_TASK, tempRun, type TempRun } from "./workspace.testkit.js";
import { sandboxResult } from "../sandbox/result.testkit.js";

/**
 * run_tests reads each preset with its own parser and judges the summary with
 * the one verdict rule (test-verdict.ts). Real reports from the real tools
 * (parsers/samples/) stand in for the sandbox's output; the sandbox itself is
 * exercised in tests/tools/report-formats.test.ts.
 */
const result = sandboxResult;
const xml = (text: string | Buffer) => ({ status: "read" as const, bytes: typeof text === "string" ? Buffer.from(text) : text });
const JUNIT = (cases: string) => `<?xml version="1.0"?><testsuites><testsuite name="s">${cases}</testsuite></testsuites>`;
const TAP = (pass: number, skipped: number) =>
  `TAP version 13\n# tests ${pass + skipped}\n# suites 0\n# pass ${pass}\n# fail 0\n# cancelled 0\n# skipped ${skipped}\n# todo 0\n# duration_ms 5.1\n`;
const summarize = (parser: PresetParser, res: SandboxResult) => summarizeTestRun(res, DEFAULT_TOOL_LIMITS, parser);

describe("summarizeTestRun: every parser's summary judged by the one rule", () => {
  const skipped: Array<[PresetParser, SandboxResult, SandboxResult]> = [
    ["node_test", result({ stdout: TAP(2, 1) }), result({ stdout: TAP(0, 2) })],
    [
      "junit_xml",
      result({ report: xml(JUNIT('<testcase name="a"/><testcase name="b"/><testcase name="c"><skipped/></testcase>')) }),
      result({ report: xml(JUNIT('<testcase name="c"><skipped message="xfail"/></testcase>')) }),
    ],
    [
      "go_test_json",
      result({ stdout: sampleText("go-skip.stdout") }),
      result({ stdout: '{"Action":"skip","Package":"m","Test":"TestA"}\n{"Action":"skip","Package":"m"}\n' }),
    ],
  ];
  for (const [parser, some, all] of skipped) {
    it(`${parser}: a skipped test is not a pass (exit 0, the rest passed -> not green)`, () => {
      const r = summarize(parser, some);
      expect(r).toMatchObject({ green: false, parser, skipped: 1 });
      expect(r.verdict).toMatch(/1 skipped and 0 todo do not count as passed/);
    });
    it(`${parser}: every test skipped with exit 0 is a false green, never a pass`, () => {
      const r = summarize(parser, all);
      expect(r.green).toBe(false);
      expect(r.discovered).toBeGreaterThan(0);
    });
  }

  it("junit_xml: a passing pytest report read from the sandbox is green with its counts", () => {
    expect(summarize("junit_xml", result({ report: xml(sampleBytes("junit-pytest-passed.xml")) }))).toMatchObject({
      green: true,
      verdict: "passed",
      discovered: 3,
      passed: 3,
      errors: 0,
      refusal: null,
    });
  });

  it("regression: a pytest collection error is a load error with pytest's own lines, never a failed test (was '0/1 passed')", () => {
    const r = summarize("junit_xml", result({ exit_code: 2, report: xml(sampleBytes("junit-pytest-collection-error.xml")) }));
    expect(r).toMatchObject({ green: false, discovered: 0, failed: 0, errors: 0, load_error_count: 1 });
    expect(r.load_errors?.[0]?.message).toMatch(/^ImportError while importing test module/);
    // the per-test list is for the baseline comparison, not for the model
    expect(r).not.toHaveProperty("cases");
  });

  it("a report file read whole is the count however much the tests printed: cut stdout does not make it 'truncated'", () => {
    const r = summarize("junit_xml", result({ truncated: true, limits: ["output"], report: xml(sampleBytes("junit-pytest-passed.xml")) }));
    expect(r).toMatchObject({ green: true, truncated: true });
    expect(summarize("node_test", result({ truncated: true, stdout: sampleText("node-mixed.tap") })).verdict).toMatch(/truncated/);
  });

  it("junit_xml: failures and errors together are all failed (pytest mixed sample: 7 failed of which 3 errors)", () => {
    const r = summarize("junit_xml", result({ exit_code: 1, report: xml(sampleBytes("junit-pytest-mixed.xml")) }));
    expect(r).toMatchObject({ green: false, discovered: 11, passed: 2, failed: 7, errors: 3, skipped: 2 });
    expect(r.verdict).toBe("7 of 11 tests failed");
  });

  for (const [what, report] of [
    ["no report file", { status: "missing" as const }],
    ["a report over the cap", { status: "too_large" as const, size: 9_999_999 }],
    ["a FIFO at the report path", { status: "unreadable" as const, reason: "not a regular file" }],
    ["an empty report", xml("")],
    ["a cut-off report", xml('<testsuites><testsuite name="s" tests="1"><testcase name="a">')],
  ] as const) {
    it(`junit_xml, exit 0: ${what} is 0 discovered and a false green, never a guess`, () => {
      const r = summarize("junit_xml", result({ report }));
      expect(r).toMatchObject({ green: false, discovered: 0, summary_found: false });
      expect(r.refusal).not.toBeNull();
    });
  }

  it("junit_xml: no report at all in the result (an executor that did not read one) is `missing`", () => {
    expect(summarize("junit_xml", result({}))).toMatchObject({ green: false, refusal: "missing" });
  });

  it("go_test_json: a package that fails to build is a load error (not a test) whose message quotes the compiler", () => {
    const r = summarize("go_test_json", result({ exit_code: 1, stdout: sampleText("go-buildfail.stdout"), stderr: goStderr("go-buildfail.stdout") }));
    expect(r).toMatchObject({ green: false, discovered: 0, failed: 0, load_error_count: 1, build_failed: ["example.com/m/buildfail"] });
    expect(r.load_errors?.[0]?.message).toMatch(/failed to build[\s\S]*bf\.go:3:28: cannot use "not an int"/);
  });

  it("go_test_json: a passing stream is green", () => {
    expect(summarize("go_test_json", result({ stdout: sampleText("go-pass.stdout") }))).toMatchObject({ green: true, discovered: 2, passed: 2 });
  });

  it("regression: a junit_xml or go preset used to be read by the node:test parser, so a green pytest run was 'no test summary'", () => {
    expect(summarize("junit_xml", result({ stdout: "3 passed in 0.01s\n", report: xml(sampleBytes("junit-pytest-passed.xml")) })).green).toBe(true);
    expect(summarize("go_test_json", result({ stdout: sampleText("go-pass.stdout") })).green).toBe(true);
  });

  it("exit_code: no count at all, and the verdict says so", () => {
    const r = summarize("exit_code", result({ stdout: "ok\n" }));
    expect(r).toMatchObject({ green: true, exit_code_only: true, verdict: "tests passed by exit code only; no test count was available" });
    expect(summarize("exit_code", result({ exit_code: 2 }))).toMatchObject({ green: false, exit_code_only: true });
  });

  it("only a junit_xml preset asks the executor for a report file, at the documented path and cap", () => {
    expect(reportFileFor("junit_xml", DEFAULT_TOOL_LIMITS)).toEqual({ path: "/tmp/mini-agent-junit.xml", maxBytes: DEFAULT_TOOL_LIMITS.testReportMaxBytes });
    for (const p of ["node_test", "go_test_json", "exit_code"] as const) expect(reportFileFor(p, DEFAULT_TOOL_LIMITS)).toBeUndefined();
  });
});

let run: TempRun;
afterEach(async () => run?.cleanup());

const task = (parser: PresetParser, command: string[]) => ({
  ...SMALL_TASK,
  test_presets: { candidate: { command, files: [], parser } },
});
const ctxFor = (r: TempRun, runner: Executor = new LocalExecutor()) => ({ ...r.ctx, runner, runId: "run_t", timeoutMs: 60_000 });

describe("run_tests with an exit_code preset (real host process)", () => {
  it("exit 0: ok, the exact weaker verdict, and no count in the data (nothing can show it as 0/0)", async () => {
    run = await tempRun({}, task("exit_code", ["node", "-e", "process.exit(0)"]));
    const r = await runTests("c1", { preset: "candidate" }, ctxFor(run));
    expect(r).toMatchObject({ ok: true, data: { parser: "exit_code", exit_code_only: true, green: true, exit_code: 0 } });
    const d = r.data as Record<string, unknown>;
    expect(d.verdict).toBe("tests passed by exit code only; no test count was available");
    for (const k of ["discovered", "passed", "failed", "skipped"]) expect(d).not.toHaveProperty(k);
  });

  it("exit 3: tests_failed naming the exit code", async () => {
    run = await tempRun({}, task("exit_code", ["node", "-e", "process.exit(3)"]));
    const r = await runTests("c1", { preset: "candidate" }, ctxFor(run));
    expect(r).toMatchObject({ ok: false, error: { code: "tests_failed" }, data: { exit_code_only: true, green: false, exit_code: 3 } });
    expect(r.error?.message).toMatch(/exited with code 3 \(exit code only/);
  });
});

describe("run_tests with a junit_xml preset on trusted_local", () => {
  it("is refused with report_file_unsupported before anything runs (never the host's /tmp)", async () => {
    run = await tempRun({}, task("junit_xml", ["node", "-e", "process.exit(0)"]));
    const local = new LocalExecutor();
    const seen: SandboxRunRequest[] = [];
    const spy: Executor = {
      kind: local.kind,
      run: (req) => (seen.push(req), local.run(req)),
      openSession: (id) => local.openSession(id),
      describe: () => local.describe(),
      preflight: () => local.preflight(),
    };
    const r = await runTests("c1", { preset: "candidate" }, ctxFor(run, spy));
    expect(r).toMatchObject({ ok: false, error: { code: "report_file_unsupported" } });
    expect(seen[0]?.reportFile).toEqual({ path: "/tmp/mini-agent-junit.xml", maxBytes: DEFAULT_TOOL_LIMITS.testReportMaxBytes });
  });
});
