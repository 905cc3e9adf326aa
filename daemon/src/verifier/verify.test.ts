import { createHash } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TaskSpec } from "../contracts/task-spec.js";
import type { SandboxResult, SandboxRunRequest } from "../contracts/sandbox.js";
import type { Executor } from "../sandbox/executor.js";
import { MiniAgentError } from "../errors.js";
import { computeManifest, type Manifest } from "../workspace/manifest.js";
import { captureBaseline } from "../workspace/baseline.js";
import { UNKNOWN_ID_SAMPLE } from "./acceptance-protocol.js";
import { verify } from "./verify.js";
import { sandboxResult } from "../sandbox/result.testkit.js";

/**
 * The verdict logic against scripted runner outcomes. The same cases run
 * against the real container sandbox in tests/verifier/; here the executor is
 * a hand-built fake so each runner fact (exit code, counts, timeout) is exact.
 */
const task = TaskSpec.parse({
  schema_version: 1,
  name: "linkcheck",
  task: "fix it",
  writable: ["src/**"],
  creatable: ["tests/test_agent_*.js"],
  test_presets: { unit: { command: ["node", "--test"], files: ["tests/*.js"] } },
  verify_preset: "unit",
  acceptance: { command: ["node", "/control/accept.js"], cases: ["nested_missing", "root_ok"], expected: { nested_missing: [], root_ok: [] } },
});

const TAP = (tests: number, pass: number, fail: number) =>
  `TAP version 13\n# tests ${tests}\n# suites 0\n# pass ${pass}\n# fail ${fail}\n# cancelled 0\n# skipped ${tests - pass - fail}\n# todo 0\n# duration_ms 5.1\n`;
const ACCEPT_OK = JSON.stringify({
  schema_version: 1,
  cases: [
    { id: "nested_missing", passed: true, actual: [], error: null },
    { id: "root_ok", passed: true, actual: [], error: null },
  ],
});

const result = sandboxResult;

class ScriptedExecutor implements Executor {
  readonly kind = "container" as const;
  readonly requests: SandboxRunRequest[] = [];
  constructor(private readonly script: Partial<Record<SandboxRunRequest["purpose"], SandboxResult | Error>>) {}
  async run(req: SandboxRunRequest): Promise<SandboxResult> {
    this.requests.push(req);
    const r = this.script[req.purpose];
    if (r instanceof Error) throw r;
    if (!r) throw new Error(`unexpected purpose ${req.purpose}`);
    return r;
  }
  async openSession(): Promise<never> {
    throw new Error("the verifier must never use a warm session");
  }
  async describe() {
    return { runtime: "runc" as const, imageDigest: null, engineVersion: null };
  }
  async preflight(): Promise<void> {}
}

let root: string;
let ws: string;
let control: string;
let baseline: Manifest;

beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), "verify-unit-"));
  ws = path.join(root, "ws");
  control = path.join(root, "control");
  await fs.mkdir(path.join(ws, "src"), { recursive: true });
  await fs.mkdir(path.join(ws, "tests"), { recursive: true });
  await fs.mkdir(control);
  await fs.writeFile(path.join(ws, "src", "check.js"), "export const x = 1;\n");
  await fs.writeFile(path.join(ws, "tests", "check.test.js"), "// test\n");
  await fs.writeFile(path.join(ws, "notes.txt"), "my unfinished work\n");
  baseline = await computeManifest(ws);
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

const run = (executor: Executor) => verify({ runId: "run-1", task, workspaceRoot: ws, baseline, acceptanceDir: control, executor });

describe("verify", () => {
  it("passes when tests are green with exit 0 and every hidden case passes, with fresh containers only", async () => {
    await fs.writeFile(path.join(ws, "src", "check.js"), "export const x = 2;\n");
    await fs.writeFile(path.join(ws, "tests", "test_agent_nested.js"), "// new\n");
    const ex = new ScriptedExecutor({ verifier: result({ stdout: TAP(3, 3, 0) }), acceptance: result({ stdout: ACCEPT_OK }) });
    const ev = await run(ex);
    expect(ev).toMatchObject({ passed: true, reason: null, protected_paths_changed: [], tests: { discovered: 3, passed: 3, failed: 0, exit_code: 0 } });
    expect(ev.acceptance).toEqual({ passed: ["nested_missing", "root_ok"], failed: [], error: null });
    expect(ev.workspace_digest).toBe((await computeManifest(ws)).digest);
    expect(ex.requests.map((r) => r.purpose)).toEqual(["verifier", "acceptance"]);
    expect(ex.requests[0]!.argv).toEqual(["node", "--test", "tests/check.test.js", "tests/test_agent_nested.js"]);
    expect(ex.requests[1]!.controlDir).toBe(control);
    expect(ex.requests[0]!.controlDir).toBeUndefined();
  });

  it("notes.txt changed -> protected_path_changed, listing it", async () => {
    await fs.appendFile(path.join(ws, "notes.txt"), "edited\n");
    const ev = await run(new ScriptedExecutor({ verifier: result({ stdout: TAP(3, 3, 0) }), acceptance: result({ stdout: ACCEPT_OK }) }));
    expect(ev).toMatchObject({ passed: false, reason: "protected_path_changed", protected_paths_changed: ["notes.txt"] });
  });

  it("the evidence counts the paths changed since the run started: 0 when the run changed nothing", async () => {
    const ex = () => new ScriptedExecutor({ verifier: result({ stdout: TAP(3, 3, 0) }), acceptance: result({ stdout: ACCEPT_OK }) });
    expect((await run(ex())).changed_path_count).toBe(0);
    await fs.writeFile(path.join(ws, "src", "check.js"), "export const x = 2;\n");
    await fs.writeFile(path.join(ws, "tests", "test_agent_nested.js"), "// new\n");
    expect((await run(ex())).changed_path_count).toBe(2);
  });

  it("a false green says why it is false, for the client to show", async () => {
    const ev = await run(new ScriptedExecutor({ verifier: result({ stdout: TAP(0, 0, 0) }), acceptance: result({ stdout: ACCEPT_OK }) }));
    expect(ev).toMatchObject({ reason: "false_green", false_green: "no tests were discovered (a green run with 0 tests is not a pass; exit code 0)" });
    await fs.rm(path.join(ws, "tests", "check.test.js"));
    const none = await run(new ScriptedExecutor({ acceptance: result({ stdout: ACCEPT_OK }) }));
    expect(none).toMatchObject({ reason: "protected_path_changed", false_green: "the preset's test files match nothing in the workspace" });
  });

  it("an added file outside writable/creatable and a removed protected file are both protected changes", async () => {
    await fs.writeFile(path.join(ws, "tests", "sneaky.test.js"), "// added\n");
    await fs.rm(path.join(ws, "tests", "check.test.js"));
    const ev = await run(new ScriptedExecutor({ verifier: result({ stdout: TAP(1, 1, 0) }), acceptance: result({ stdout: ACCEPT_OK }) }));
    expect(ev.reason).toBe("protected_path_changed");
    expect(ev.protected_paths_changed).toEqual(["tests/check.test.js", "tests/sneaky.test.js"]);
  });

  it("regression: '0 tests passed' with exit 0 is a false green, not a pass", async () => {
    const ev = await run(new ScriptedExecutor({ verifier: result({ stdout: TAP(0, 0, 0) }), acceptance: result({ stdout: ACCEPT_OK }) }));
    expect(ev).toMatchObject({ passed: false, reason: "false_green", tests: { discovered: 0 } });
  });

  it("regression: '3 passed' printed with a non-zero exit is a failure", async () => {
    const ev = await run(new ScriptedExecutor({ verifier: result({ stdout: TAP(3, 3, 0), exit_code: 1 }), acceptance: result({ stdout: ACCEPT_OK }) }));
    expect(ev).toMatchObject({ passed: false, reason: "verification_failed", tests: { passed: 3, exit_code: 1 } });
  });

  it("the evidence names a runner the kernel killed and the limits the tests ran into (issue 10 item 8)", async () => {
    const killed = result({ stdout: "TAP version 13\n", exit_code: 137, signal: "SIGKILL", oom_killed: true, limits: ["memory", "pids"] });
    const ev = await run(new ScriptedExecutor({ verifier: killed, acceptance: result({ stdout: ACCEPT_OK }) }));
    expect(ev).toMatchObject({ passed: false, reason: "verification_failed", tests: { exit_code: 137, limits: ["memory", "pids"], runner_signal: "SIGKILL" } });
    expect(ev.details).toEqual(
      expect.arrayContaining([
        "candidate tests: the runner was killed by SIGKILL",
        "candidate tests: limits reached: memory (the kernel OOM-killed a process), pids (a new process or thread was refused)",
      ]),
    );
  });

  it("timed out or truncated test runs are failures even when their summary is green", async () => {
    for (const over of [{ timed_out: true }, { truncated: true }]) {
      const ev = await run(new ScriptedExecutor({ verifier: result({ stdout: TAP(3, 3, 0), ...over }), acceptance: result({ stdout: ACCEPT_OK }) }));
      expect(ev.reason).toBe("verification_failed");
    }
  });

  it("a failed hidden case fails verification and is named", async () => {
    const out = JSON.stringify({
      schema_version: 1,
      cases: [
        { id: "nested_missing", passed: false, actual: ["docs/x.md"], error: "broken link missed" },
        { id: "root_ok", passed: true, actual: [], error: null },
      ],
    });
    const ev = await run(new ScriptedExecutor({ verifier: result({ stdout: TAP(3, 3, 0) }), acceptance: result({ stdout: out, exit_code: 1 }) }));
    expect(ev).toMatchObject({ passed: false, reason: "verification_failed", acceptance: { passed: ["root_ok"], failed: ["nested_missing"], error: null } });
  });

  it("a case the harness reports as passed with an answer other than the host's expected one fails (the harness's verdict is only a claim)", async () => {
    // e.g. code under test printed the harness's result line itself
    const out = JSON.stringify({
      schema_version: 1,
      cases: [
        { id: "nested_missing", passed: true, actual: ["forged"], error: null },
        { id: "root_ok", passed: true, actual: [], error: null },
      ],
    });
    const ev = await run(new ScriptedExecutor({ verifier: result({ stdout: TAP(3, 3, 0) }), acceptance: result({ stdout: out }) }));
    expect(ev).toMatchObject({ passed: false, reason: "verification_failed", acceptance: { passed: ["root_ok"], failed: ["nested_missing"], error: null } });
    expect((ev.details ?? []).join("\n")).toMatch(/reported as passed with a wrong answer: nested_missing/);
    // the expected answer itself is never written into the evidence
    expect(JSON.stringify(ev)).not.toMatch(/"actual"/);
  });

  it("the right answer is not enough when the harness itself reports the case failed", async () => {
    const out = JSON.stringify({
      schema_version: 1,
      cases: [
        { id: "nested_missing", passed: false, actual: [], error: "harness check failed" },
        { id: "root_ok", passed: true, actual: [], error: null },
      ],
    });
    const ev = await run(new ScriptedExecutor({ verifier: result({ stdout: TAP(3, 3, 0) }), acceptance: result({ stdout: out, exit_code: 1 }) }));
    expect(ev).toMatchObject({ passed: false, acceptance: { failed: ["nested_missing"] } });
  });

  it("acceptance output with an extra field -> acceptance_protocol_error", async () => {
    const out = JSON.stringify({
      schema_version: 1,
      cases: [
        { id: "nested_missing", passed: true, actual: [], error: null, extra: 1 },
        { id: "root_ok", passed: true, actual: [], error: null },
      ],
    });
    const ev = await run(new ScriptedExecutor({ verifier: result({ stdout: TAP(3, 3, 0) }), acceptance: result({ stdout: out }) }));
    expect(ev.reason).toBe("acceptance_protocol_error");
    expect(ev.acceptance?.error).toMatch(/extra/);
  });

  for (const count of [254, 1000]) {
    it(`regression: ${count} unknown 128-character case ids from the harness are counted, not echoed into the evidence`, async () => {
      // candidate code shares the harness's sandbox: ids it invents must not become a channel into the trace
      const ids = Array.from({ length: count }, (_, i) => createHash("sha256").update(String(i)).digest("hex").repeat(2));
      const cases = [...ids, "nested_missing", "root_ok"].map((id) => ({ id, passed: true, actual: [], error: null }));
      const ev = await run(
        new ScriptedExecutor({ verifier: result({ stdout: TAP(3, 3, 0) }), acceptance: result({ stdout: JSON.stringify({ schema_version: 1, cases }) }) }),
      );
      expect(ev).toMatchObject({ passed: false, reason: "acceptance_protocol_error" });
      const text = JSON.stringify(ev);
      expect(text.length).toBeLessThan(1_500);
      // no id beyond the 32-character cap, and at most 3 of them named at all
      for (const id of ids) expect(text).not.toContain(id.slice(0, UNKNOWN_ID_SAMPLE.chars + 1));
      expect(ids.filter((id) => text.includes(id.slice(0, 12))).length).toBeLessThanOrEqual(UNKNOWN_ID_SAMPLE.count);
      if (count <= 256) expect(ev.acceptance?.error).toMatch(new RegExp(`^${count} unknown case id`));
    });
  }

  it("regression: 1,000 file-shaped lines printed by test code are counted, not echoed into the evidence", async () => {
    const fake = Array.from({ length: 1_000 }, (_, i) => `ok ${i + 1} - /workspace/tests/${"z".repeat(200)}${i}.js`).join("\n");
    const stdout = `TAP version 13\n${fake}\n# tests 1003\n# suites 0\n# pass 1003\n# fail 0\n# cancelled 0\n# skipped 0\n# todo 0\n# duration_ms 5.1\n`;
    const ev = await run(new ScriptedExecutor({ verifier: result({ stdout }), acceptance: result({ stdout: ACCEPT_OK }) }));
    expect(ev.tests).toMatchObject({ discovered: 3, passed: 3 });
    expect((ev.details ?? []).join("\n")).toMatch(/^1000 test file\(s\) exited without running a test/m);
    expect(JSON.stringify(ev).length).toBeLessThan(2_000);
  });

  it("an unreachable engine is verification_error:runtime_unavailable, never a pass", async () => {
    const ev = await run(new ScriptedExecutor({ verifier: new MiniAgentError("runtime_unavailable", "no engine") }));
    expect(ev).toMatchObject({ passed: false, reason: "verification_error:runtime_unavailable" });
  });

  it("regression: a sandbox failure says why in the evidence (it was verification_error:sandbox_error with empty details)", async () => {
    const ev = await run(
      new ScriptedExecutor({
        verifier: new MiniAgentError("sandbox_error", "copying the workspace failed: write /workspace/big.bin: no space left on device"),
      }),
    );
    expect(ev).toMatchObject({ passed: false, reason: "verification_error:sandbox_error" });
    expect(ev.details).toContain("the sandbox could not run the tests: copying the workspace failed: write /workspace/big.bin: no space left on device");
  });

  it("a cancelled run is verification_error:cancelled and skips acceptance", async () => {
    const ex = new ScriptedExecutor({ verifier: result({ cancelled: true, exit_code: null }), acceptance: result({ stdout: ACCEPT_OK }) });
    const ev = await run(ex);
    expect(ev.reason).toBe("verification_error:cancelled");
    expect(ex.requests).toHaveLength(1);
  });

  it("loads the run-start baseline from the run's control dir when none is passed (the runtime's Verifier port)", async () => {
    const runControl = path.join(root, "run-control");
    await captureBaseline(ws, runControl);
    await fs.writeFile(path.join(ws, "notes.txt"), "replaced\n");
    const ex = new ScriptedExecutor({ verifier: result({ stdout: TAP(1, 1, 0) }), acceptance: result({ stdout: ACCEPT_OK }) });
    const ev = await verify({
      runId: "run-1",
      task,
      workspaceRoot: ws,
      baseline: { runControlDir: runControl },
      acceptanceDir: control,
      executor: ex,
      signal: new AbortController().signal,
    });
    expect(ev).toMatchObject({ reason: "protected_path_changed", protected_paths_changed: ["notes.txt"] });
    expect(ex.requests.find((r) => r.purpose === "acceptance")!.controlDir).toBe(control);
    // the verify preset also ran once on the baseline's own copy, never on the live workspace
    expect(ex.requests.filter((r) => r.workspaceDir === path.join(runControl, "baseline", "files"))).toHaveLength(1);
  });

  it("passes with the baseline loaded from the run's control dir when nothing protected changed", async () => {
    const runControl = path.join(root, "run-control");
    await captureBaseline(ws, runControl);
    const ex = new ScriptedExecutor({ verifier: result({ stdout: TAP(1, 1, 0) }), acceptance: result({ stdout: ACCEPT_OK }) });
    const ev = await verify({ runId: "run-1", task, workspaceRoot: ws, baseline: { runControlDir: runControl }, acceptanceDir: control, executor: ex });
    expect(ev).toMatchObject({ passed: true, reason: null });
  });

  it("regression: a baseline whose stdout passed the output cap but whose JUnit report was read whole is compared test by test; it was dropped as 'the baseline's test output was cut'", async () => {
    const junitTask = TaskSpec.parse({
      ...task,
      acceptance: undefined,
      test_presets: { unit: { command: ["node", "run-junit.js"], files: [], parser: "junit_xml" } },
    });
    const runControl = path.join(root, "run-control");
    await captureBaseline(ws, runControl);
    await fs.writeFile(path.join(ws, "src", "check.js"), "export const x = 2;\n");
    const xml = '<testsuites><testsuite name="s" tests="2"><testcase classname="s" name="a"/><testcase classname="s" name="b"/></testsuite></testsuites>';
    // the suite printed more than the cap kept; the report file is complete
    const cut = result({ stdout: "x".repeat(1024), truncated: true, report: { status: "read", bytes: new TextEncoder().encode(xml) } });
    const ev = await verify({
      runId: "run-1",
      task: junitTask,
      workspaceRoot: ws,
      baseline: { runControlDir: runControl },
      acceptanceDir: control,
      executor: new ScriptedExecutor({ verifier: cut }),
    });
    expect(ev).toMatchObject({ passed: true, tests: { discovered: 2, passed: 2, compare: { baseline: "compared" } } });
  });

  it("a run control dir without a baseline is verification_error:baseline_not_found, never a pass", async () => {
    const ex = new ScriptedExecutor({ verifier: result({ stdout: TAP(1, 1, 0) }), acceptance: result({ stdout: ACCEPT_OK }) });
    const ev = await verify({
      runId: "run-1",
      task,
      workspaceRoot: ws,
      baseline: { runControlDir: path.join(root, "nothing") },
      acceptanceDir: control,
      executor: ex,
    });
    expect(ev).toMatchObject({ passed: false, reason: "verification_error:baseline_not_found" });
    expect(ex.requests).toHaveLength(0);
  });
});
