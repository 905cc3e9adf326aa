import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runClient, startDaemon, tempDir, type DaemonHandle } from "./harness.js";

/**
 * An exit-code-only verify preset and a task without hidden acceptance, end to
 * end through the daemon and the client (trusted_local: host processes, a
 * replay the test trusts). What the user reads must say the run passed by exit
 * code only, never a test count; a run that changed nothing is no_changes.
 */
let root: string;
let d: DaemonHandle;
let taskSpec: string;

// passes once the fix file exists; prints nothing a parser could count
const CHECK = ["node", "-e", "process.exit(require('fs').existsSync('src/fix_done.js') ? 0 : 1)"];

beforeAll(async () => {
  root = tempDir("ma-exitcode-e2e-");
  d = await startDaemon({ stateDir: path.join(root, "state") });
  taskSpec = path.join(root, "task.json");
  fs.writeFileSync(
    taskSpec,
    JSON.stringify({
      schema_version: 1,
      name: "exit-code-only",
      task: "create src/fix_done.js",
      writable: ["src/**"],
      creatable: ["src/fix_*.js"],
      test_presets: { check: { command: CHECK, files: [], parser: "exit_code", timeout_seconds: 60 } },
      verify_preset: "check",
    }),
  );
});

afterAll(async () => {
  await d?.stop("SIGTERM");
  fs.rmSync(root, { recursive: true, force: true });
});

function replay(name: string, decisions: unknown[]): string {
  const file = path.join(root, `${name}.json`);
  fs.writeFileSync(file, JSON.stringify({ schema_version: 1, decisions }));
  return file;
}

async function start(name: string, replayFile: string) {
  const ws = path.join(root, name);
  fs.mkdirSync(path.join(ws, "src"), { recursive: true });
  fs.writeFileSync(path.join(ws, "src", "app.js"), "export const v = 1;\n");
  const socket = ["--socket", d.socketPath];
  const r = await runClient([
    "run",
    "--workspace",
    ws,
    "--task-spec",
    taskSpec,
    "--backend",
    "trusted_local",
    "--replay",
    replayFile,
    "--trust-replay-file",
    ...socket,
  ]);
  return { r, runId: /run (\S+) started/.exec(r.stdout)?.[1] ?? "", socket };
}

const RUN_TESTS = (id: string) => ({ kind: "tool", call: { call_id: id, name: "run_tests", arguments: { preset: "check" } } });

describe("an exit-code-only task without acceptance, through the daemon", () => {
  it("completes with the weaker verdict; status, why and trace never show a test count", async () => {
    const file = replay("fix", [
      RUN_TESTS("c_red"),
      { kind: "tool", call: { call_id: "c_fix", name: "apply_patch", arguments: { path: "src/fix_done.js", version: "absent", old: "", new: "done\n" } } },
      RUN_TESTS("c_green"),
      { kind: "final", text: "done" },
    ]);
    let { r, runId, socket } = await start("ws-fix", file);
    for (let i = 0; i < 3 && r.code === 3; i++) {
      const s = JSON.parse((await runClient(["status", runId, "--json", ...socket])).stdout) as { action_id: string };
      r = await runClient(["approve", runId, s.action_id, ...socket]);
    }
    expect({ code: r.code, out: r.stdout + r.stderr }).toMatchObject({ code: 0 });
    expect(r.stdout).toContain("completed: verified by the host Verifier (tests passed by exit code only; no test count was available); 1 write(s)");

    const json = JSON.parse((await runClient(["status", runId, "--json", ...socket])).stdout) as {
      tests: Record<string, unknown>;
      verification: { tests: Record<string, unknown>; details: string[] };
      why: string;
    };
    expect(json.tests).toMatchObject({ exit_code_only: true, green: true });
    expect(json.verification.tests).toMatchObject({ exit_code_only: true, exit_code: 0 });
    expect(json.verification.details).toContain("candidate tests: tests passed by exit code only; no test count was available");
    expect(json.why).not.toMatch(/\d+\/\d+|\d+ tests? passed/);

    const trace = await runClient(["trace", runId, ...socket]);
    const observed = trace.stdout.split("\n").filter((l) => l.includes("tool_observed") && l.includes("run_tests"));
    expect(observed.length).toBe(2);
    for (const line of observed) expect(line).not.toMatch(/discovered=|passed=|failed=/);
  });

  it("a run that changed nothing fails as no_changes, said first, with the tests' outcome after it", async () => {
    const { r } = await start("ws-nothing", replay("nothing", [RUN_TESTS("c_only"), { kind: "final", text: "done" }]));
    expect({ code: r.code, out: r.stdout + r.stderr }).toMatchObject({ code: 1 });
    expect(r.stdout).toContain(
      "failed: no_changes (the workspace is as the run found it); candidate tests failed by exit code only (runner exited 1; no test count was available)",
    );
  });

  it("a junit_xml preset on trusted_local is refused before the run exists (the host's /tmp is never read)", async () => {
    const spec = path.join(root, "junit-task.json");
    fs.writeFileSync(
      spec,
      JSON.stringify({
        schema_version: 1,
        name: "junit-local",
        task: "t",
        writable: ["src/**"],
        test_presets: { pytest: { command: ["python3", "-m", "pytest", "--junitxml=/tmp/mini-agent-junit.xml"], files: [], parser: "junit_xml" } },
        verify_preset: "pytest",
      }),
    );
    const ws = path.join(root, "ws-junit");
    fs.mkdirSync(ws);
    const socket = ["--socket", d.socketPath];
    const before = (await runClient(["list", "--json", ...socket])).stdout;
    const file = replay("junit", [{ kind: "final", text: "done" }]);
    const r = await runClient([
      "run",
      "--workspace",
      ws,
      "--task-spec",
      spec,
      "--backend",
      "trusted_local",
      "--replay",
      file,
      "--trust-replay-file",
      ...socket,
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("report_file_unsupported");
    expect(r.stderr).toContain("use the container backend");
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect((await runClient(["list", "--json", ...socket])).stdout).toBe(before);
    expect(fs.readdirSync(ws)).toEqual([]);
  });
});
