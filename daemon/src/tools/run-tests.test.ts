import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { SandboxResult } from "../contracts/sandbox.js";
import { MiniAgentError } from "../errors.js";
import type { Executor } from "../sandbox/executor.js";
import { LocalExecutor } from "../sandbox/local-executor.js";
import { DEFAULT_TOOL_LIMITS } from "./limits.js";
import { keepTestOutput, testOutputPath } from "./output-artifact.js";
import { normalizeRunnerText, presetInvocation, runTests, summarizeTestRun } from "./run-tests.js";
import { SMALL_TASK, tempRun, type TempRun } from "./workspace.testkit.js";
import { sandboxResult } from "../sandbox/result.testkit.js";

let run: TempRun;
afterEach(async () => run?.cleanup());

const HEAD = 'import test from "node:test";\nimport assert from "node:assert/strict";\n';
const PKG = JSON.stringify({ type: "module" });
const ctxFor = (r: TempRun, runner: Executor = new LocalExecutor()) => ({ ...r.ctx, runner, runId: "run_t", timeoutMs: 60_000 });

describe("presetInvocation", () => {
  it("expands globs host-side in path order, skipping links, and reports a glob that matched nothing", async () => {
    const task = { ...SMALL_TASK, test_presets: { c: { command: ["node", "--test"], files: ["tests/*.js", "spec/*.js"] } }, verify_preset: "c" };
    run = await tempRun({ "tests/test_b.js": "", "tests/a.js": "", "tests/.hidden.js": "", "tests/x.txt": "" }, task);
    const inv = await presetInvocation(run.ctx.task, "c", run.ws, run.ctl);
    expect(inv).toMatchObject({
      argv: ["node", "--test", "tests/a.js", "tests/test_b.js"],
      files: ["tests/a.js", "tests/test_b.js"],
      unmatched_globs: ["spec/*.js"],
    });
    expect(await presetInvocation(run.ctx.task, "nope", run.ws)).toBeNull();
  });
});

describe("runTests through a real host process", () => {
  it("green: exit 0, counts parsed, ok=true", async () => {
    run = await tempRun({ "package.json": PKG, "tests/a.js": `${HEAD}test("one", () => assert.ok(true));\n` });
    const r = await runTests("c1", { preset: "candidate" }, ctxFor(run));
    expect(r).toMatchObject({ ok: true, data: { discovered: 1, passed: 1, failed: 0, exit_code: 0, timed_out: false, cancelled_run: false, green: true } });
  });

  it("red: tests_failed with the first failing test named", async () => {
    run = await tempRun({
      "package.json": PKG,
      "tests/a.js": `${HEAD}test("good", () => {});\ntest("bad one", () => assert.equal(2, 3, "two is not three"));\n`,
    });
    const r = await runTests("c1", { preset: "candidate" }, ctxFor(run));
    expect(r).toMatchObject({ ok: false, error: { code: "tests_failed" }, data: { discovered: 2, passed: 1, failed: 1, exit_code: 1 } });
    const d = r.data as { diagnostics: Array<{ name: string; message: string }> };
    expect(d.diagnostics[0]).toMatchObject({ name: "bad one", message: expect.stringContaining("two is not three") });
  });

  it("a test reading a linked fixture passes in the copy, and a link the rule left out is named in links_left_out (trusted_local applies the same rule)", async () => {
    run = await tempRun({
      "package.json": PKG,
      "tests/fixtures/real.json": '{"ok":true}',
      "tests/a.js": `${HEAD}import fs from "node:fs";\ntest("linked", () => assert.deepEqual(JSON.parse(fs.readFileSync("tests/fixtures/link.json", "utf8")), { ok: true }));\n`,
    });
    fs.symlinkSync("real.json", path.join(run.ws, "tests/fixtures/link.json"));
    fs.symlinkSync("/etc/hostname", path.join(run.ws, "tests/fixtures/host.txt"));
    const r = await runTests("c1", { preset: "candidate" }, ctxFor(run));
    expect(r).toMatchObject({ ok: true, data: { passed: 1, failed: 0 } });
    expect((r.data as { links_left_out: unknown }).links_left_out).toEqual({
      count: 1,
      by_reason: { outside: 1 },
      paths: [{ path: "tests/fixtures/host.txt", reason: "outside" }],
    });
  });

  it("unknown preset -> unknown_preset and nothing runs", async () => {
    run = await tempRun({});
    let ran = false;
    const runner = new LocalExecutor();
    const spy: Executor = {
      kind: runner.kind,
      run: async (req) => ((ran = true), runner.run(req)),
      openSession: (id) => runner.openSession(id),
      describe: () => runner.describe(),
      preflight: () => runner.preflight(),
    };
    expect(await runTests("c1", { preset: "sh" }, ctxFor(run, spy))).toMatchObject({ ok: false, error: { code: "unknown_preset" } });
    expect(ran).toBe(false);
  });

  it("timeout: timed_out=true and tests_failed", async () => {
    run = await tempRun({ "package.json": PKG, "tests/a.js": `${HEAD}test("spins", () => { for (;;) {} });\n` });
    const r = await runTests("c1", { preset: "candidate" }, { ...ctxFor(run), timeoutMs: 1_000 });
    expect(r).toMatchObject({ ok: false, error: { code: "tests_failed" }, data: { timed_out: true } });
  });

  it("cancel: cancelled, not a test failure", async () => {
    run = await tempRun({ "package.json": PKG, "tests/a.js": `${HEAD}test("spins", () => { for (;;) {} });\n` });
    const ac = new AbortController();
    const pending = runTests("c1", { preset: "candidate" }, { ...ctxFor(run), signal: ac.signal });
    setTimeout(() => ac.abort(), 200);
    expect(await pending).toMatchObject({ ok: false, error: { code: "cancelled" }, data: { cancelled_run: true } });
  });

  it("oversized output is truncated to the cap and reported, never trusted as green", async () => {
    run = await tempRun({ "package.json": PKG, "tests/a.js": `${HEAD}test("noisy", () => { console.log("x".repeat(100000)); });\n` });
    // node's TAP on stdout is its report: its cap is the report cap, so both are set low here
    const r = await runTests(
      "c1",
      { preset: "candidate" },
      { ...ctxFor(run), limits: { testOutputBytes: 256, runnerOutputCapBytes: 4096, testReportMaxBytes: 4096 } },
    );
    expect(r).toMatchObject({ ok: false, truncated: true, data: { truncated: true, output_truncated: true } });
    expect(Buffer.byteLength((r.data as { output: string }).output)).toBeLessThanOrEqual(256);
  });

  it("regression: a node --test suite whose TAP (its report, on stdout) is larger than the runner cap is not cut and judged 'truncated'", async () => {
    run = await tempRun({ "package.json": PKG, "tests/a.js": `${HEAD}test("noisy", () => { console.log("x".repeat(100000)); });\n` });
    const r = await runTests("c1", { preset: "candidate" }, { ...ctxFor(run), limits: { runnerOutputCapBytes: 4096 } });
    expect(r).toMatchObject({ ok: true, data: { truncated: false, discovered: 1, passed: 1 } });
  });

  it("regression: globs matching nothing must not fall back to node's own discovery (which ran test/other.mjs and said green)", async () => {
    const task = { ...SMALL_TASK, test_presets: { candidate: { command: ["node", "--test", "--test-reporter=tap"], files: ["tests/*.js"] } } };
    run = await tempRun({ "package.json": PKG, "test/other.mjs": "" }, task);
    const r = await runTests("c1", { preset: "candidate" }, ctxFor(run));
    expect(r).toMatchObject({
      ok: false,
      error: { code: "not_found", message: expect.stringContaining("tests/*.js") },
      data: { discovered: 0, unmatched_globs: ["tests/*.js"] },
    });
  });

  it("a green run whose shown output is shortened stays green, with truncated=true on the result", async () => {
    run = await tempRun({ "package.json": PKG, "tests/a.js": `${HEAD}test("one", () => assert.ok(true));\n` });
    const r = await runTests("c1", { preset: "candidate" }, { ...ctxFor(run), limits: { testOutputBytes: 64 } });
    expect(r).toMatchObject({ ok: true, truncated: true, data: { green: true, truncated: false, output_truncated: true } });
    expect(Buffer.byteLength((r.data as { output: string }).output)).toBeLessThanOrEqual(64);
  });

  it("a runner failure surfaces its stable code", async () => {
    run = await tempRun({ "tests/a.js": "" });
    // an engine that is gone cannot be produced on demand here; this fake stands in for it alone
    const local = new LocalExecutor();
    const broken: Executor = {
      kind: "container",
      run: async () => {
        throw new MiniAgentError("runtime_unavailable", "no engine");
      },
      openSession: (id) => local.openSession(id),
      describe: () => local.describe(),
      preflight: async () => {},
    };
    expect(await runTests("c1", { preset: "candidate" }, ctxFor(run, broken))).toMatchObject({ ok: false, error: { code: "runtime_unavailable" } });
  });
});

describe("normalizeRunnerText", () => {
  it("folds a trusted_local copy's host path to /workspace and drops timings", () => {
    const raw =
      "not ok 1 - x\n  ---\n  duration_ms: 1.234\n  location: '/tmp/mini-agent-local-Ab12/workspace/tests/a.js:3:1'\n  stack: |-\n    file:///tmp/mini-agent-local-Ab12/workspace/src/x.js:4:9\n  ...\n# duration_ms 55.1\n";
    const out = normalizeRunnerText(raw);
    expect(out).toBe("not ok 1 - x\n  ---\n  location: '/workspace/tests/a.js:3:1'\n  stack: |-\n    /workspace/src/x.js:4:9\n  ...\n");
  });

  it("the same failing run shows the same output text twice (no timing noise, no temp dirs)", async () => {
    run = await tempRun({ "package.json": PKG, "tests/a.js": `${HEAD}test("bad", () => assert.equal(1, 2));\n` });
    const a = await runTests("c1", { preset: "candidate" }, ctxFor(run));
    const b = await runTests("c1", { preset: "candidate" }, ctxFor(run));
    expect((a.data as { output: string }).output).toBe((b.data as { output: string }).output);
    expect((a.data as { output: string }).output).not.toContain("mini-agent-local-");
  });
});

describe("summarizeTestRun", () => {
  const tap = (tests: number, pass: number, fail: number) =>
    `TAP version 13\n1..${tests}\n# tests ${tests}\n# suites 0\n# pass ${pass}\n# fail ${fail}\n# cancelled 0\n# skipped 0\n# todo 0\n# duration_ms 5\n`;
  const res = (over: Partial<SandboxResult>): SandboxResult => sandboxResult({ runtime: "host", ...over });
  it("'3 passed' printed with a non-zero exit is a failure", () => {
    expect(summarizeTestRun(res({ stdout: tap(3, 3, 0), exit_code: 1 }), DEFAULT_TOOL_LIMITS)).toMatchObject({ green: false, passed: 3 });
  });
  it("exit 0 with 0 tests is a false green, not a pass", () => {
    expect(summarizeTestRun(res({ stdout: tap(0, 0, 0) }), DEFAULT_TOOL_LIMITS)).toMatchObject({ green: false, verdict: expect.stringContaining("no tests") });
  });
  it("exit 0 with 3 passed is green", () => {
    expect(summarizeTestRun(res({ stdout: tap(3, 3, 0) }), DEFAULT_TOOL_LIMITS)).toMatchObject({ green: true, discovered: 3 });
  });
  it("regression (exit 137, no summary, no OOM recorded): a runner the kernel OOM-killed is named as killed, with the memory limit", () => {
    const r = summarizeTestRun(
      res({ stdout: "TAP version 13\n", exit_code: 137, signal: "SIGKILL", oom_killed: true, limits: ["memory"] }),
      DEFAULT_TOOL_LIMITS,
    );
    expect(r).toMatchObject({ green: false, runner_signal: "SIGKILL", limits: ["memory"], sandbox_lost: false });
    expect(r.verdict).toBe("the test runner was killed by SIGKILL before its summary; limits reached: memory (the kernel OOM-killed a process)");
  });
  it("a green run that ran into the pids limit stays green and still says so in its data", () => {
    expect(summarizeTestRun(res({ stdout: tap(1, 1, 0), limits: ["pids"] }), DEFAULT_TOOL_LIMITS)).toMatchObject({
      green: true,
      verdict: "passed",
      limits: ["pids"],
    });
  });
  it("a run whose sandbox stopped under it says so, never a pass", () => {
    const r = summarizeTestRun(res({ stdout: tap(1, 1, 0), exit_code: null, sandbox_lost: true }), DEFAULT_TOOL_LIMITS);
    expect(r).toMatchObject({ green: false, sandbox_lost: true, verdict: "the sandbox stopped while the tests ran; no status came back" });
  });
});

describe("the kept test output (output-artifact.ts)", () => {
  it("holds what was captured, redacted, marks a cut, and is replaced by the next run of its kind", async () => {
    const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), "kept-output-"));
    try {
      const token = `ghp_${"a1B2".repeat(9)}`;
      await keepTestOutput(dir, "run_tests", sandboxResult({ stdout: `first ${token}\n`, stderr: "warn\n", truncated: true }));
      const file = testOutputPath(dir, "run_tests");
      expect(fs.readFileSync(file, "utf8")).toBe(
        "first [redacted]\n\n[stderr]\nwarn\n\n[mini-agent: the output went over the capture cap here; the rest was not kept]\n",
      );
      await keepTestOutput(dir, "run_tests", sandboxResult({ stdout: "second\n" }));
      expect(fs.readFileSync(file, "utf8")).toBe("second\n");
      expect(fs.readdirSync(path.dirname(file))).toEqual(["run_tests.log"]);
      // a control dir that cannot hold it: nothing kept, nothing thrown
      await expect(keepTestOutput(path.join(file, "not-a-dir"), "verifier", sandboxResult())).resolves.toBeUndefined();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
