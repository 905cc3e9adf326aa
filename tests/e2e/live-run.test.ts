import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeProvider, textReply, toolCallReply, type FakeProvider, type RecordedRequest, type Reply } from "../live/openai-server.js";
import { allFiles, REPO, rawRequest, runClient, startDaemon, tempDir, type DaemonHandle } from "./harness.js";

/**
 * `--model live` through the real daemon and client: refused before the probes
 * have run, then (after `mini-agent-client probe`) a scripted OpenAI-compatible
 * server on 127.0.0.1 drives the linkcheck fix with two approvals. The key from
 * the daemon's environment travels ONLY in the Authorization header.
 */
const FIXTURE = path.join(REPO, "fixtures/linkcheck");
const KEY = "sk-e2e-live-canary-0123456789abcdefABCDEF";
const BUG = "    const resolved = path.join(rootDir, file);";
const FIX = "    const resolved = path.join(path.dirname(docAbs), file);";
const REPLAY = JSON.parse(fs.readFileSync(path.join(FIXTURE, "replay.json"), "utf8")) as {
  decisions: Array<{ call?: { name: string; arguments: Record<string, unknown> } }>;
};
const NEW_TEST = REPLAY.decisions.find((d) => d.call?.name === "apply_patch" && d.call.arguments.version === "absent")!.call!.arguments;

type Msg = { role: string; content: string | null };

/** answers from what it is sent: the fix quotes the version read_file returned */
function model(req: RecordedRequest): Reply {
  const messages = req.body.messages as Msg[];
  if (!messages.some((m) => m.role === "assistant")) return textReply("Plan: read, add a failing nested-link test, fix, re-run.");
  const seen = messages.filter((m) => m.role === "tool").map((m) => JSON.parse(m.content ?? "{}") as { tool: string; data: Record<string, unknown> });
  switch (seen.length) {
    case 0:
      return toolCallReply("read_file", { path: "src/linkcheck.js" }, "call_read");
    case 1:
      return toolCallReply("apply_patch", NEW_TEST, "call_add_test");
    case 2:
      return toolCallReply("run_tests", { preset: "candidate" }, "call_red");
    case 3:
      return toolCallReply("apply_patch", { path: "src/linkcheck.js", version: seen.find((e) => e.tool === "read_file")!.data.version, old: BUG, new: FIX }, "call_fix");
    case 4:
      return toolCallReply("run_tests", { preset: "candidate" }, "call_green");
    default:
      return textReply("FINAL: relative links resolve from the document's directory; 3 of 3 tests pass.");
  }
}

let root: string;
let stateDir: string;
let provider: FakeProvider;
let d: DaemonHandle | null = null;

beforeAll(async () => {
  root = tempDir("ma-live-e2e-");
  stateDir = path.join(root, "state");
  fs.mkdirSync(stateDir, { mode: 0o700 });
  const built = spawnSync(process.execPath, ["--import", "tsx", "sandbox-image/build.ts", "--state-dir", stateDir, "--quiet"], { cwd: REPO, encoding: "utf8" });
  if (built.status !== 0) throw new Error(`sandbox image build failed: ${built.stderr}`);
  provider = await startFakeProvider(model);
  d = await startDaemon({ stateDir, env: { MINI_AGENT_API_KEY: KEY, MINI_AGENT_BASE_URL: provider.baseUrl, MINI_AGENT_MODEL: "e2e-model" } });
});

afterAll(async () => {
  if (d) await d.stop("SIGTERM");
  await provider?.close();
  fs.rmSync(root, { recursive: true, force: true });
});

describe("a live model through the daemon and the client", () => {
  it("is refused before the probes ran (exit 2, zero requests), then completes the fix after `probe` with the key only in Authorization", async () => {
    const socket = ["--socket", d!.socketPath];
    const refused = await runClient(["run", "--fixture", FIXTURE, "--workspace", path.join(root, "ws-refused"), "--model", "live", ...socket]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("isolation_unverified");
    expect(refused.stderr).toContain("mini-agent-client probe");
    expect(provider.requests).toHaveLength(0);
    expect(fs.existsSync(path.join(root, "ws-refused"))).toBe(false);

    const probe = await runClient(["probe", ...socket]);
    expect({ code: probe.code, out: probe.stdout }).toMatchObject({ code: 0 });
    expect((await runClient(["health", ...socket])).code).toBe(0);

    const ws = path.join(root, "ws");
    const first = await runClient(["run", "--fixture", FIXTURE, "--workspace", ws, "--model", "live", ...socket]);
    expect({ code: first.code, out: first.stdout + first.stderr }).toMatchObject({ code: 3 });
    const runId = /run (\S+) started/.exec(first.stdout)?.[1] ?? "";
    let code = first.code;
    for (let i = 0; i < 3 && code === 3; i++) {
      const s = JSON.parse((await runClient(["status", runId, "--json", ...socket])).stdout) as { action_id: string };
      code = (await runClient(["approve", runId, s.action_id, ...socket])).code;
    }
    expect(code).toBe(0);
    const view = JSON.parse((await rawRequest(d!.socketPath, "GET", `/v1/runs/${runId}`)).text) as { run: { status: string; counters: { writes: number; prompt_tokens: number } } };
    expect(view.run.status).toBe("completed");
    expect(view.run.counters.writes).toBe(2);
    expect(view.run.counters.prompt_tokens).toBeGreaterThan(0);

    // the key: in every request's Authorization header, and nowhere else
    expect(provider.requests.length).toBeGreaterThan(5);
    for (const r of provider.requests) {
      expect(r.headers.authorization).toBe(`Bearer ${KEY}`);
      expect(r.raw).not.toContain(KEY);
    }
    await d!.stop("SIGTERM");
    d = null;
    const leaks = allFiles(root).filter((f) => fs.readFileSync(f).includes(KEY));
    expect(leaks).toEqual([]);
    // the live run left its record
    expect(fs.readdirSync(path.join(stateDir, "live-runs")).length).toBeGreaterThan(0);
  });
});
