import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeProvider, type FakeProvider } from "../live/openai-server.js";
import { canonicalModel } from "../live/canonical-model.js";
import { allFiles, REPO, rawRequest, runClient, startDaemon, tempDir, type DaemonHandle } from "./harness.js";
import { pinTestImage } from "../kit/sandbox-image.js";

/**
 * `--model live` through the real daemon and client: refused before the probes
 * have run, then (after `mini-agent-client probe`) a scripted OpenAI-compatible
 * server on 127.0.0.1 drives the linkcheck fix with two approvals. The key from
 * the daemon's environment travels ONLY in the Authorization header.
 */
const FIXTURE = path.join(REPO, "fixtures/linkcheck");
const KEY = "sk-e2e-live-canary-0123456789abcdefABCDEF";

let root: string;
let stateDir: string;
let provider: FakeProvider;
let d: DaemonHandle | null = null;

beforeAll(async () => {
  root = tempDir("ma-live-e2e-");
  stateDir = path.join(root, "state");
  fs.mkdirSync(stateDir, { mode: 0o700 });
  await pinTestImage(path.join(stateDir, "sandbox-image.lock.json"));
  provider = await startFakeProvider(canonicalModel);
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
    expect(refused.stderr).toMatch(/refresh the isolation report with: \S.* probe --socket /);
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
    const view = JSON.parse((await rawRequest(d!.socketPath, "GET", `/v1/runs/${runId}`)).text) as {
      run: { status: string; counters: { writes: number; prompt_tokens: number } };
    };
    expect(view.run.status).toBe("completed");
    expect(view.run.counters.writes).toBe(2);
    expect(view.run.counters.prompt_tokens).toBeGreaterThan(0);

    // the key: in every request's Authorization header, and nowhere else
    expect(provider.requests.length).toBeGreaterThan(5);
    for (const r of provider.requests) {
      expect(r.headers.authorization).toBe(`Bearer ${KEY}`);
      expect(r.raw).not.toContain(KEY);
    }
    // every request, also those of the models made after each approval (when the workspace
    // already held the run's own writes), carried the project data the trace records, byte for byte
    const trace = await runClient(["trace", runId, "--jsonl", ...socket]);
    const events = trace.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; payload: { message_sha256?: string; rules?: { path: string | null } } });
    const contexts = events.filter((e) => e.type === "project_context");
    expect(contexts).toHaveLength(1);
    const sent = provider.requests.map((r) => {
      const data = (r.body.messages as Array<{ content: string | null }>).filter((m) => m.content?.startsWith("UNTRUSTED_PROJECT_DATA "));
      expect(data).toHaveLength(1);
      return createHash("sha256").update(data[0]!.content!).digest("hex");
    });
    expect(new Set(sent)).toEqual(new Set([contexts[0]!.payload.message_sha256]));
    await d!.stop("SIGTERM");
    d = null;
    const leaks = allFiles(root).filter((f) => fs.readFileSync(f).includes(KEY));
    expect(leaks).toEqual([]);
    // the live run left its record
    expect(fs.readdirSync(path.join(stateDir, "live-runs")).length).toBeGreaterThan(0);
  });
});
