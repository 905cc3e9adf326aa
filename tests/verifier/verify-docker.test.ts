import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { TaskSpec } from "../../daemon/src/contracts/task-spec.js";
import type { DockerExecutor } from "../../daemon/src/sandbox/docker-executor.js";
import { computeManifest, type Manifest } from "../../daemon/src/workspace/manifest.js";
import { verify } from "../../daemon/src/verifier/verify.js";
import { containerExecutor, leftovers } from "../runtime/harness.js";

/**
 * The Verifier against the real container sandbox with a small task of its own
 * (a `sum` module, node:test tests, a protected notes.txt, hidden acceptance in
 * control/). Each case builds the runner fact it guards against for real:
 * nothing about the runner's output is scripted here.
 */
const SUM_OK = "export function sum(a, b) { return a + b; }\n";
const SUM_BUGGY = "export function sum(a, b) { return a - b; }\n";
const TEST = (name: string) =>
  `import test from "node:test";\nimport assert from "node:assert/strict";\nimport { sum } from "../src/sum.js";\ntest("${name}", () => { assert.equal(sum(2, 3), 5); });\n`;

/** prints the acceptance protocol; `variant` lets a case break it on purpose */
const ACCEPT = `import { sum } from "/workspace/src/sum.js";
const variant = process.argv[2] ?? "ok";
const cases = [
  { id: "sum_small", passed: sum(1, 2) === 3, actual: sum(1, 2), error: null },
  { id: "sum_negative", passed: sum(-4, 1) === -3, actual: sum(-4, 1), error: null },
];
for (const c of cases) if (!c.passed) c.error = "wrong sum";
if (variant === "extra") cases[0].confidence = 0.9;
if (variant === "missing") cases.pop();
process.stdout.write(JSON.stringify({ schema_version: 1, cases }) + "\\n");
process.exitCode = cases.every((c) => c.passed) ? 0 : 1;
`;

function taskSpec(over: Record<string, unknown> = {}, acceptArg = "ok"): TaskSpec {
  return TaskSpec.parse({
    schema_version: 1,
    name: "sum",
    task: "make sum add",
    writable: ["src/**"],
    creatable: ["tests/test_agent_*.js"],
    test_presets: {
      unit: { command: ["node", "--test"], files: ["tests/*.test.js", "tests/test_agent_*.js"] },
      as_directory: { command: ["node", "--test", "tests/"] },
      lying: { command: ["node", "tests/lying-runner.js"] },
    },
    verify_preset: "unit",
    acceptance: { command: ["node", "/control/accept.mjs", acceptArg], cases: ["sum_small", "sum_negative"], expected: { sum_small: 3, sum_negative: -3 } },
    ...over,
  });
}

let tmp: string;
let executor: DockerExecutor;
let ws: string;
let control: string;
let baseline: Manifest;
const runIds: string[] = [];
let n = 0;

beforeAll(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), "verifier-docker-"));
  executor = await containerExecutor(path.join(tmp, "state"));
  control = path.join(tmp, "control");
  await fs.mkdir(control);
  await fs.writeFile(path.join(control, "accept.mjs"), ACCEPT);
});

afterAll(async () => {
  expect(await leftovers(runIds)).toEqual([]);
  await fs.rm(tmp, { recursive: true, force: true });
});

beforeEach(async () => {
  ws = path.join(tmp, `ws-${++n}`);
  await fs.mkdir(path.join(ws, "src"), { recursive: true });
  await fs.mkdir(path.join(ws, "tests"));
  await fs.writeFile(path.join(ws, "package.json"), JSON.stringify({ type: "module" }));
  await fs.writeFile(path.join(ws, "src", "sum.js"), SUM_BUGGY);
  await fs.writeFile(path.join(ws, "tests", "sum.test.js"), TEST("adds"));
  await fs.writeFile(path.join(ws, "notes.txt"), "the user's unfinished work\n");
  baseline = await computeManifest(ws);
});

async function check(task: TaskSpec) {
  const runId = `verifier-test-${n}`;
  runIds.push(runId);
  return verify({ runId, task, workspaceRoot: ws, baseline, acceptanceDir: control, executor });
}

describe("verify on the container sandbox", () => {
  it("the fixed implementation with a new agent test passes, with evidence for this exact workspace", async () => {
    await fs.writeFile(path.join(ws, "src", "sum.js"), SUM_OK);
    await fs.writeFile(path.join(ws, "tests", "test_agent_more.js"), TEST("adds again"));
    const ev = await check(taskSpec());
    expect(ev.reason).toBeNull();
    expect(ev.passed).toBe(true);
    expect(ev.tests).toMatchObject({ discovered: 2, passed: 2, failed: 0, exit_code: 0, timed_out: false, truncated: false });
    expect(ev.acceptance).toEqual({ passed: ["sum_negative", "sum_small"], failed: [], error: null });
    expect(ev.workspace_digest).toBe((await computeManifest(ws)).digest);
  });

  it("the buggy implementation fails: red tests and failed hidden cases", async () => {
    const ev = await check(taskSpec());
    expect(ev).toMatchObject({ passed: false, reason: "verification_failed", tests: { discovered: 1, failed: 1 } });
    expect(ev.acceptance?.failed).toEqual(["sum_negative", "sum_small"]);
  });

  it("notes.txt changed -> protected_path_changed even though everything else is green", async () => {
    await fs.writeFile(path.join(ws, "src", "sum.js"), SUM_OK);
    await fs.appendFile(path.join(ws, "notes.txt"), "overwritten by the agent\n");
    const ev = await check(taskSpec());
    expect(ev).toMatchObject({ passed: false, reason: "protected_path_changed", protected_paths_changed: ["notes.txt"] });
    expect(ev.tests.passed).toBe(1);
  });

  it("regression: tests named tests/test_x.js run as a directory -> 0 discovered, exit 0 -> false_green", async () => {
    await fs.writeFile(path.join(ws, "src", "sum.js"), SUM_OK);
    await fs.rm(path.join(ws, "tests", "sum.test.js"));
    await fs.writeFile(path.join(ws, "tests", "test_x.js"), TEST("never discovered"));
    baseline = await computeManifest(ws);
    const ev = await check(taskSpec({ verify_preset: "as_directory" }));
    expect(ev).toMatchObject({ passed: false, reason: "false_green", tests: { discovered: 0, exit_code: 0 } });
  });

  it("regression: a runner printing '3 passed' but exiting non-zero is a failure", async () => {
    await fs.writeFile(path.join(ws, "src", "sum.js"), SUM_OK);
    // a complete, consistent node:test summary block, so only the exit code gives the lie away
    const summary = ["# tests 3", "# suites 0", "# pass 3", "# fail 0", "# cancelled 0", "# skipped 0", "# todo 0", "# duration_ms 1"].join("\\n");
    await fs.writeFile(path.join(ws, "tests", "lying-runner.js"), `console.log("TAP version 13\\n${summary}");\nprocess.exit(1);\n`);
    baseline = await computeManifest(ws);
    const ev = await check(taskSpec({ verify_preset: "lying" }));
    expect(ev).toMatchObject({ passed: false, reason: "verification_failed", tests: { discovered: 3, passed: 3, exit_code: 1 } });
  });

  it("acceptance output with an extra field -> acceptance_protocol_error", async () => {
    await fs.writeFile(path.join(ws, "src", "sum.js"), SUM_OK);
    const ev = await check(taskSpec({}, "extra"));
    expect(ev).toMatchObject({ passed: false, reason: "acceptance_protocol_error" });
    expect(ev.acceptance?.error).toMatch(/confidence/);
  });

  it("acceptance output missing a case -> acceptance_protocol_error", async () => {
    await fs.writeFile(path.join(ws, "src", "sum.js"), SUM_OK);
    const ev = await check(taskSpec({}, "missing"));
    expect(ev).toMatchObject({ passed: false, reason: "acceptance_protocol_error" });
    expect(ev.acceptance?.error).toMatch(/sum_negative/);
  });

  it("the hidden acceptance assets are never copied into the workspace", async () => {
    await fs.writeFile(path.join(ws, "src", "sum.js"), SUM_OK);
    await check(taskSpec());
    const after = await computeManifest(ws);
    expect(Object.keys(after.files).some((f) => f.includes("accept"))).toBe(false);
  });
});
