import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PolicyRules } from "../contracts/policy.js";
import { VerificationEvidence } from "../contracts/run-view.js";
import { TaskSpec, type VerifyCommand } from "../contracts/task-spec.js";
import { resolveEffectivePolicy } from "../policy/effective.js";
import { redactDeep } from "../redact/index.js";
import { LocalExecutor } from "../sandbox/local-executor.js";
import { captureBaseline } from "../workspace/baseline.js";
import { verify } from "./verify.js";

/**
 * The Verifier's extras (issue 12): the secret scan of the run's diff and the
 * extra verify commands from the task, the daemon's policy and the workspace's
 * policy file. Real files, a real baseline in a control dir, real node
 * processes (LocalExecutor, as on trusted_local); tests/verifier/ runs the
 * commands in real containers.
 */
const TEST_FILE = 'import test from "node:test";\ntest("a", () => {});\n';
const AWS_ID = "AKIA2E0A8F3B244C9986";
const ASSIGNED = "q7Lm2Rt9Xv4Bn8Kd3Pw6Zc1F";
const CHECK: VerifyCommand = { name: "syntax", command: ["node", "--check", "src/x.mjs"], parser: "exit_code", timeout_seconds: 60 };

function task(extra: Partial<TaskSpec> = {}): TaskSpec {
  return TaskSpec.parse({
    schema_version: 1,
    name: "extras",
    task: "make it work",
    writable: ["src/**", ".env.local"],
    test_presets: { verify: { command: ["node", "--test", "--test-reporter=tap"], files: ["tests/*.test.mjs"] } },
    verify_preset: "verify",
    ...extra,
  });
}

let root: string;
let ws: string;
let control: string;

beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), "verify-extras-"));
  ws = path.join(root, "ws");
  control = path.join(root, "control");
  await fs.mkdir(path.join(ws, "src"), { recursive: true });
  await fs.mkdir(path.join(ws, "tests"), { recursive: true });
  await fs.writeFile(path.join(ws, "src", "x.mjs"), "export const x = 1;\n");
  await fs.writeFile(path.join(ws, "src", "keys.mjs"), `// left here by a human before the run\nexport const OLD = "${AWS_ID}";\n`);
  await fs.writeFile(path.join(ws, "tests", "x.test.mjs"), TEST_FILE);
  await captureBaseline(ws, control);
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

const run = (t: TaskSpec, policy?: ReturnType<typeof resolveEffectivePolicy>) =>
  verify({
    runId: "run-extras",
    task: t,
    workspaceRoot: ws,
    baseline: { runControlDir: control },
    acceptanceDir: null,
    executor: new LocalExecutor({ tmpRoot: root }),
    ...(policy && { policy }),
  });

describe("secret scan of the final diff", () => {
  it("a key the run added fails the run as secret_in_diff, naming file and line, never the value", async () => {
    await fs.writeFile(path.join(ws, "src", "x.mjs"), `export const x = 2;\nexport const id = "${AWS_ID}";\n`);
    await fs.writeFile(path.join(ws, ".env.local"), `# local\nPAYMENTS_KEY=${ASSIGNED}\n`);
    const ev = await run(task());
    expect(ev).toMatchObject({ passed: false, reason: "secret_in_diff", tests: { discovered: 1, passed: 1 } });
    expect(ev.diff_scan_hits).toEqual([
      { path: ".env.local", line: 2, rule: "assigned_secret" },
      { path: "src/x.mjs", line: 2, rule: "aws_access_key_id" },
    ]);
    expect(ev.details).toContain("secret in the diff: .env.local line 2 (assigned_secret), src/x.mjs line 2 (aws_access_key_id)");
    const said = JSON.stringify(ev);
    expect(said).not.toContain(AWS_ID);
    expect(said).not.toContain(ASSIGNED);
  });

  it("regression: the ledger's redaction replaced the hit list under its once secret-looking field name (run state 'malformed'); the evidence survives redaction whole", async () => {
    await fs.writeFile(path.join(ws, "src", "x.mjs"), `export const id = "${AWS_ID}";\n`);
    const ev = await run(task());
    expect(ev.diff_scan_hits).toHaveLength(1);
    // what the ledger stores (store/ledger.ts redacts every state it writes) must still be evidence
    expect(VerificationEvidence.parse(redactDeep(ev))).toEqual(ev);
  });

  it("a key already in the baseline is not the run's: editing another line of its file passes", async () => {
    await fs.appendFile(path.join(ws, "src", "keys.mjs"), "export const y = 3;\n");
    const ev = await run(task());
    expect(ev).toMatchObject({ passed: true, reason: null, diff_scan_hits: [] });
  });
});

describe("extra verify commands", () => {
  it("the task's command runs after the tests; its result is in the evidence, and a clean file passes", async () => {
    await fs.writeFile(path.join(ws, "src", "x.mjs"), "export const x = 2;\n");
    const ev = await run(task({ verify_commands: [CHECK] }));
    expect(ev).toMatchObject({ passed: true, reason: null });
    expect(ev.verify_commands).toEqual([
      expect.objectContaining({ name: "task:syntax", argv: ["node", "--check", "src/x.mjs"], exit_code: 0, passed: true, timed_out: false, truncated: false }),
    ]);
  });

  it("a red verify command fails a run whose tests are green, as verify_command_failed naming it", async () => {
    await fs.writeFile(path.join(ws, "src", "x.mjs"), "export const x = ;\n");
    const ev = await run(task({ verify_commands: [CHECK] }));
    expect(ev).toMatchObject({ passed: false, reason: "verify_command_failed", tests: { discovered: 1, passed: 1 } });
    expect(ev.verify_commands).toEqual([expect.objectContaining({ name: "task:syntax", exit_code: 1, passed: false })]);
    expect(ev.details).toContain("verify command(s) failed: task:syntax (exited with code 1)");
  });

  it("the daemon policy's command runs; the workspace cannot replace it by using the same name", async () => {
    await fs.writeFile(path.join(ws, "src", "x.mjs"), "export const x = ;\n");
    const policy = resolveEffectivePolicy({
      file: { schema_version: 1, verify_commands: [CHECK] },
      source: "/etc/policy.json",
      // a workspace file trying to turn the daemon's check into one that always passes
      workspace: PolicyRules.parse({ verify_commands: [{ name: "syntax", command: ["node", "-e", "0"] }] }),
    });
    const ev = await run(task(), policy);
    expect(ev.verify_commands?.map((c) => [c.name, c.passed])).toEqual([
      ["policy:syntax", false],
      ["workspace:syntax", false],
    ]);
    expect(ev).toMatchObject({ passed: false, reason: "verify_command_failed" });
  });

  it.each([
    ["ci", ["node", "-e", "require('fs').writeFileSync('MARKER', 'ran')"], "it is denied by policy:ci:commands.unlisted"],
    ["interactive", ["node", "-e", "require('fs').writeFileSync('MARKER', 'ran')"], "it would need an approval (policy:interactive:tools.command)"],
    // allowed by the policy, and still never a host process (this executor is trusted_local's)
    ["interactive", ["node", "--check", "src/x.mjs"], "it runs only in a container sandbox, never as a host process"],
  ] as const)(
    "regression: a workspace file's verify command bypassed the command policy (%s %j): not run, the run is not green, and the evidence says why",
    async (profile, argv, why) => {
      const policy = resolveEffectivePolicy({
        file: null,
        source: null,
        profile,
        workspace: PolicyRules.parse({ verify_commands: [{ name: "extra", command: argv }] }),
      });
      await fs.writeFile(path.join(ws, "src", "x.mjs"), "export const x = 2;\n");
      const ev = await run(task(), policy);
      expect(ev).toMatchObject({ passed: false, reason: "verify_command_failed", tests: { discovered: 1, passed: 1 } });
      expect(ev.verify_commands).toEqual([
        expect.objectContaining({ name: "workspace:extra", exit_code: null, passed: false, message: expect.stringContaining(why) }),
      ]);
      expect(ev.details).toContain(`verify command workspace:extra was not run: ${ev.verify_commands?.[0]?.message.replace(/^not run: /, "")}`);
      await expect(fs.access(path.join(ws, "MARKER"))).rejects.toThrow();
    },
  );

  it("a task's verify commands are validated strictly: unknown keys, duplicate names and more than 8 are refused", () => {
    const bad = [[{ ...CHECK, shell: true }], [CHECK, CHECK], Array.from({ length: 9 }, (_, i) => ({ ...CHECK, name: `c${i}` })), [{ ...CHECK, command: [] }]];
    for (const verify_commands of bad) expect(TaskSpec.safeParse({ ...task(), verify_commands }).success).toBe(false);
    expect(TaskSpec.parse({ ...task(), verify_commands: [{ name: "lint", command: ["npx", "tsc"] }] }).verify_commands).toEqual([
      { name: "lint", command: ["npx", "tsc"], parser: "exit_code", timeout_seconds: 120 },
    ]);
  });
});
