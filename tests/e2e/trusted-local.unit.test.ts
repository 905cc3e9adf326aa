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
});
