import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO, runClient, startDaemon, tempDir, type DaemonHandle } from "./harness.js";

/**
 * The trusted_local backend through the daemon: host processes, so the
 * daemon's own environment must not reach them (the key is moved out of
 * process.env at start-up); untrusted replays and live models are refused
 * before a workspace exists.
 */
const FIXTURE = path.join(REPO, "fixtures/linkcheck");
const KEY = "sk-local-canary-0123456789abcdefABCDEF";
let root: string;
let d: DaemonHandle;

beforeAll(async () => {
  root = tempDir("ma-local-e2e-");
  d = await startDaemon({ stateDir: path.join(root, "state"), env: { MINI_AGENT_API_KEY: KEY, OPENAI_API_KEY: KEY } });
});

afterAll(async () => {
  await d?.stop("SIGTERM");
  fs.rmSync(root, { recursive: true, force: true });
});

describe("trusted_local through the daemon", () => {
  it("completes the built-in replay with two approvals", async () => {
    const socket = ["--socket", d.socketPath];
    const ws = path.join(root, "ws-builtin");
    let r = await runClient(["run", "--fixture", FIXTURE, "--workspace", ws, "--backend", "trusted_local", ...socket]);
    const runId = /run (\S+) started/.exec(r.stdout)?.[1] ?? "";
    for (let i = 0; i < 3 && r.code === 3; i++) {
      const s = JSON.parse((await runClient(["status", runId, "--json", ...socket])).stdout) as { action_id: string };
      r = await runClient(["approve", runId, s.action_id, ...socket]);
    }
    expect({ code: r.code, out: r.stdout + r.stderr }).toMatchObject({ code: 0 });
    expect(r.stdout).toContain("completed: verified by the host Verifier");
  });

  it("refuses an untrusted replay file and a live model before any workspace is created", async () => {
    const socket = ["--socket", d.socketPath];
    const replay = path.join(root, "other-replay.json");
    fs.copyFileSync(path.join(FIXTURE, "replay.json"), replay);
    const ws = path.join(root, "ws-refused");
    const untrusted = await runClient(["run", "--fixture", FIXTURE, "--workspace", ws, "--backend", "trusted_local", "--replay", replay, ...socket]);
    expect(untrusted.code).toBe(1);
    expect(untrusted.stderr).toContain("replay_untrusted");
    const live = await runClient(["run", "--fixture", FIXTURE, "--workspace", ws, "--backend", "trusted_local", "--model", "live", ...socket]);
    expect(live.code).toBe(2);
    expect(live.stderr).toContain("isolation_unverified");
    expect(live.stderr).toContain("backend_not_isolated");
    expect(fs.existsSync(ws)).toBe(false);
  });

  it("host test processes never see the daemon's credential variables (regression: key inherited through process.env)", async () => {
    const socket = ["--socket", d.socketPath];
    const envOut = path.join(root, "seen-env.json");
    const testFile = [
      'import test from "node:test";',
      'import fs from "node:fs";',
      `test("records the environment it was given", () => { fs.writeFileSync(${JSON.stringify(envOut)}, JSON.stringify(process.env)); });`,
      "",
    ].join("\n");
    const replay = path.join(root, "env-replay.json");
    fs.writeFileSync(
      replay,
      JSON.stringify({
        schema_version: 1,
        decisions: [
          {
            kind: "tool",
            call: { call_id: "c_env", name: "apply_patch", arguments: { path: "tests/test_agent_env.js", version: "absent", old: "", new: testFile } },
          },
          { kind: "tool", call: { call_id: "c_run", name: "run_tests", arguments: { preset: "candidate" } } },
          { kind: "final", text: "done" },
        ],
      }),
    );
    const ws = path.join(root, "ws-env");
    const r = await runClient([
      "run",
      "--fixture",
      FIXTURE,
      "--workspace",
      ws,
      "--backend",
      "trusted_local",
      "--replay",
      replay,
      "--trust-replay-file",
      ...socket,
    ]);
    expect({ code: r.code, out: r.stdout + r.stderr }).toMatchObject({ code: 3 });
    const runId = /run (\S+) started/.exec(r.stdout)?.[1] ?? "";
    const s = JSON.parse((await runClient(["status", runId, "--json", ...socket])).stdout) as { action_id: string };
    await runClient(["approve", runId, s.action_id, ...socket]);
    const seen = fs.readFileSync(envOut, "utf8");
    const env = JSON.parse(seen) as Record<string, string>;
    expect(Object.keys(env).length).toBeGreaterThan(0);
    expect(seen).not.toContain(KEY);
    expect(Object.keys(env)).not.toContain("MINI_AGENT_API_KEY");
    expect(Object.keys(env)).not.toContain("OPENAI_API_KEY");
  });

  it("regression: a --goal draft or a workspace policy's verify_commands never choose a host process on trusted_local (the repository named the program)", async () => {
    const socket = ["--socket", d.socketPath];
    const marker = path.join(root, "host-ran-marker");
    const markTest = `import test from "node:test";\nimport fs from "node:fs";\ntest("m", () => fs.writeFileSync(${JSON.stringify(marker)}, "ran"));\n`;
    const replay = path.join(root, "final-replay.json");
    fs.writeFileSync(replay, JSON.stringify({ schema_version: 1, decisions: [{ kind: "final", text: "done" }] }));
    const trusted = ["--backend", "trusted_local", "--replay", replay, "--trust-replay-file", ...socket];

    // a drafted task: package.json names the test command, and its test writes the marker
    const drafted = path.join(root, "ws-drafted");
    fs.mkdirSync(path.join(drafted, "tests"), { recursive: true });
    fs.writeFileSync(path.join(drafted, "package.json"), JSON.stringify({ type: "module", scripts: { test: "node --test tests/" } }));
    fs.writeFileSync(path.join(drafted, "tests/test_m.js"), markTest);
    const goal = await runClient(["run", "--workspace", drafted, "--goal", "g", ...trusted]);
    expect({ code: goal.code, err: goal.stderr }).toMatchObject({ code: 2, err: expect.stringMatching(/backend_not_isolated: an ad-hoc run's test command/) });

    // a task spec of the user's, in a workspace whose policy file adds a verify command that writes the marker
    const withPolicy = path.join(root, "ws-policy");
    fs.cpSync(path.join(FIXTURE, "repo"), withPolicy, { recursive: true });
    fs.mkdirSync(path.join(withPolicy, ".mini-agent"));
    fs.writeFileSync(path.join(withPolicy, "mark.js"), `require("fs").writeFileSync(${JSON.stringify(marker)}, "ran");\n`);
    fs.writeFileSync(path.join(withPolicy, ".mini-agent/policy.json"), JSON.stringify({ verify_commands: [{ name: "mark", command: ["node", "mark.js"] }] }));
    const { acceptance: _, ...task } = JSON.parse(fs.readFileSync(path.join(FIXTURE, "task.json"), "utf8")) as Record<string, unknown>;
    const taskFile = path.join(root, "task-no-acceptance.json");
    fs.writeFileSync(taskFile, JSON.stringify(task));
    const policy = await runClient(["run", "--workspace", withPolicy, "--task-spec", taskFile, ...trusted]);
    // `node mark.js` is not on the command policy's allowlist: the command policy refuses it first (policy/workspace-verify.ts);
    // one it allowed would still be refused as a host process (runtime/create-run.ts)
    expect({ code: policy.code, err: policy.stderr }).toMatchObject({
      code: 1,
      err: expect.stringMatching(/policy_denied: \.mini-agent\/policy\.json: verify command "mark"/),
    });

    expect(fs.existsSync(marker)).toBe(false);
    const listed = JSON.parse((await runClient(["list", "--json", ...socket])).stdout) as Array<{ workspace?: string }>;
    expect(listed.filter((r) => r.workspace === drafted || r.workspace === withPolicy)).toEqual([]);
  });
});
