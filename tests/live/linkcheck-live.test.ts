import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { Agent } from "undici";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createCredentialSource, type CredentialSource } from "../../daemon/src/credentials/credential-source.js";
import type { IsolationReportSummary } from "../../daemon/src/gate/isolation-facts.js";
import { createLiveModelFactory } from "../../daemon/src/gate/live-model-factory.js";
import { sandboxIsolationFacts } from "../../daemon/src/gate/sandbox-facts.js";
import { createLiveRunRecorder, type LiveRunRecorder } from "../../daemon/src/live-record/recorder.js";
import { listLiveRunRecords } from "../../daemon/src/live-record/write.js";
import { resolveLiveModelConfig } from "../../daemon/src/models/live/config.js";
import type { RunServiceImpl } from "../../daemon/src/runtime/service-impl.js";
import { resolveSandboxConfig } from "../../daemon/src/sandbox/config.js";
import { createDockerClient } from "../../daemon/src/sandbox/docker-client.js";
import type { DockerExecutor } from "../../daemon/src/sandbox/docker-executor.js";
import { toolDescriptions } from "../../daemon/src/tools/descriptions.js";
import { containerExecutor, leftovers, LINKCHECK, service, tempDir } from "../runtime/harness.js";
import { errorReply, startFakeProvider, textReply, toolCallReply, type FakeProvider, type RecordedRequest, type Reply } from "./openai-server.js";
import { canonicalModel, envelopes, type Msg } from "./canonical-model.js";

process.env.TESTCONTAINERS_RYUK_DISABLED = "true";

const KEY = "sk-linkcheck-live-canary-0123456789abcdef";

/** Every file under dir whose bytes contain the needle (the ledger, its WAL, logs, records, control dirs). */
function filesContaining(dir: string, needle: string): string[] {
  const hits: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    if (fs.readFileSync(file).includes(needle)) hits.push(path.relative(dir, file));
  }
  return hits;
}

describe("a scripted live run of the linkcheck fixture through the real RunService", () => {
  let root: string;
  let stateDir: string;
  let executor: DockerExecutor;
  let server: FakeProvider;
  let dispatcher: Agent;
  let credentials: CredentialSource;
  let runs: RunServiceImpl;
  let recorder: LiveRunRecorder;
  const runIds: string[] = [];

  beforeAll(async () => {
    root = tempDir("live-linkcheck");
    stateDir = path.join(root, "state");
    executor = await containerExecutor(stateDir);
  });
  afterAll(async () => {
    expect(await leftovers(runIds)).toEqual([]);
    fs.rmSync(root, { recursive: true, force: true });
  });

  /** the provider's backoff waits, recorded instead of slept (no timing in tests) */
  let waits: number[] = [];

  async function setUp(responder: (req: RecordedRequest, i: number) => Reply, configExtra: Record<string, unknown> = {}, reportAgeMs = 0) {
    waits = [];
    let fakeNow = 1_000_000;
    server = await startFakeProvider(responder);
    dispatcher = new Agent();
    const credFile = path.join(root, `credentials-${runIds.length}.json`);
    fs.writeFileSync(credFile, JSON.stringify({ api_key: KEY }), { mode: 0o600 });
    credentials = createCredentialSource({ env: new Map(), filePath: credFile });
    // the engine facts are real (pinned digest present, HostConfig hash, engine version);
    // the probes' report is supplied fresh here; gate-docker.test.ts covers refusals
    const fresh: IsolationReportSummary = { passed: true, generated_at: new Date(Date.now() - reportAgeMs).toISOString(), failed_probe_ids: [] };
    const facts = sandboxIsolationFacts({
      docker: createDockerClient({}),
      sandbox: resolveSandboxConfig({}),
      lockPath: path.join(stateDir, "sandbox-image.lock.json"),
      readReport: async () => fresh,
    });
    recorder = createLiveRunRecorder({ stateDir, service: () => runs, budgetsOf: (id) => runs.ledger.getRun(id).record.budgets, pollMs: 500 });
    const modelFactory = createLiveModelFactory({
      facts,
      config: resolveLiveModelConfig({ MINI_AGENT_BASE_URL: server.baseUrl, MINI_AGENT_MODEL: "scripted-model" }, configExtra),
      credentials,
      dispatcher,
      recorder,
      pacing: {
        now: () => fakeNow,
        sleep: async (ms) => {
          waits.push(ms);
          fakeNow += ms;
        },
      },
      workspaceOf: (req) => {
        const r = runs.ledger.getRun(req.runId).record;
        return { root: r.workspace, controlDir: r.control_dir };
      },
    });
    runs = service(stateDir, executor, { modelFactory });
  }

  async function start(name: string, budgets: Record<string, number> = {}) {
    const created = await runs.createRun({
      workspace: path.join(root, name),
      fixtureDir: LINKCHECK,
      model: "live",
      trustReplayFile: false,
      backend: "container",
      budgets,
    });
    runIds.push(created.run_id);
    return created.run_id;
  }

  afterEach(async () => {
    await runs.shutdown();
    await recorder.close();
    await server.close();
    await dispatcher.close();
  });

  it("a stale report refuses createRun before anything exists: no workspace, no run, no key read, no request", async () => {
    await setUp(canonicalModel, {}, 25 * 3_600_000);
    const workspace = path.join(root, "ws-refused");
    const controlRoot = path.join(stateDir, "control");
    const controlsBefore = fs.existsSync(controlRoot) ? fs.readdirSync(controlRoot) : [];
    await expect(runs.createRun({ workspace, fixtureDir: LINKCHECK, model: "live", trustReplayFile: false, backend: "container" })).rejects.toMatchObject({
      code: "isolation_unverified",
      details: { reason: "report_stale", refresh_command: "mini-agent-client probe" },
    });
    expect(fs.existsSync(workspace)).toBe(false);
    expect(runs.listRuns()).toEqual([]);
    expect(fs.existsSync(controlRoot) ? fs.readdirSync(controlRoot) : []).toEqual(controlsBefore);
    expect(credentials.reads).toBe(0);
    expect(server.requests).toHaveLength(0);
  });

  it("completes with the host Verifier after two approvals; requests carry the generated tools, paired messages and the key only in Authorization", async () => {
    await setUp(canonicalModel);
    const runId = await start("ws-canonical");
    const first = await runs.settled(runId);
    expect(first.status, first.reason ?? "").toBe("awaiting_approval");
    expect(first.pending_action?.path).toBe("tests/test_agent_nested.js");
    await runs.approve(runId, first.pending_action!.action_id);
    const second = await runs.settled(runId);
    expect(second.status, second.reason ?? "").toBe("awaiting_approval");
    expect(second.pending_action?.path).toBe("src/linkcheck.js");
    expect(second.tests).toMatchObject({ failed: 1 });
    await runs.approve(runId, second.pending_action!.action_id);
    const done = await runs.settled(runId);
    expect(done.status, done.reason ?? "").toBe("completed");
    expect(waits).toEqual([]); // no failure, no backoff
    expect(done.verification).toMatchObject({ passed: true, tests: { discovered: 3, passed: 3, failed: 0 } });
    expect(done.counters).toMatchObject({ model_turns: 7, writes: 2 });
    expect(done.counters.prompt_tokens).toBeGreaterThan(0);

    // what the provider received
    expect(server.requests).toHaveLength(7);
    const workspaceFile = fs.readFileSync(path.join(LINKCHECK, "repo", "src", "linkcheck.js"));
    const fixRequest = server.requests[5]!; // the request answered with the fix
    const read = envelopes(fixRequest).find((e) => e.tool === "read_file")!;
    expect(read.data.version).toBe(createHash("sha256").update(workspaceFile).digest("hex"));
    for (const req of server.requests) {
      expect(req.headers.authorization).toBe(`Bearer ${KEY}`);
      expect(req.raw).not.toContain(KEY);
      expect(req.body.tools).toEqual(toolDescriptions());
      const msgs = req.body.messages as Msg[];
      expect(msgs[0]!.role).toBe("system");
      expect(msgs[0]!.content).toContain("Act ONLY through the provided tools");
      // every assistant tool call is answered by the tool message right after it
      msgs.forEach((m, i) => {
        for (const c of m.tool_calls ?? []) expect(msgs[i + 1]).toMatchObject({ role: "tool", tool_call_id: c.id });
        if (m.role === "tool") expect(msgs[i - 1]!.tool_calls?.map((c) => c.id)).toContain(m.tool_call_id);
      });
    }
    expect(String((server.requests[0]!.body.messages as Msg[])[1]!.content)).toContain("src/linkcheck.js");
    // one key read per drive segment (start, after each approval), none before the gate
    expect(credentials.reads).toBe(3);

    await recorder.settled(runId);
    const records = (await listLiveRunRecords(stateDir)).filter((r) => r.run_id === runId);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      status: "completed",
      model: "scripted-model",
      provider_host: new URL(server.baseUrl).host,
      tool_calls_by_name: { read_file: 1, apply_patch: 2, run_tests: 2 },
      approvals: { asked: 2, approved: 2, rejected: 0 },
      turns: 7,
      verification: { passed: true },
    });
    const recordText = fs
      .readdirSync(path.join(stateDir, "live-runs"))
      .map((n) => fs.readFileSync(path.join(stateDir, "live-runs", n), "utf8"))
      .join("");
    expect(recordText).not.toContain(KEY);
    expect(recordText).not.toContain(root);
    expect(filesContaining(stateDir, KEY)).toEqual([]);
  });

  it.each([
    ["500", () => errorReply(500, "upstream down"), [500, 1000]],
    ["429 with Retry-After", () => errorReply(429, "slow down", { "retry-after": "3" }), [3000, 3000]],
    ["timeout", () => ({ hang: true }) as Reply, [500, 1000]],
  ])(
    "regression: %s is retried exactly twice by the runtime with backoff, then the run stops as failed and its record is kept",
    async (name, reply, expectedWaits) => {
      await setUp((_req, i) => (i === 0 ? textReply("Plan: read the code.") : reply()), name === "timeout" ? { request_timeout_ms: 300 } : {});
      const runId = await start(`ws-retry-${name}`);
      const done = await runs.settled(runId);
      expect(done.status).toBe("failed");
      expect(done.reason).toMatch(/^model_error: /);
      expect(server.requests).toHaveLength(1 + 3);
      const events = await runs.events(runId, 0, 0);
      expect(events.filter((e) => e.type === "model_retry")).toHaveLength(2);
      expect(waits).toEqual(expectedWaits);
      await recorder.settled(runId);
      const [record] = (await listLiveRunRecords(stateDir)).filter((r) => r.run_id === runId);
      expect(record).toMatchObject({ status: "failed", model_retries: 2 });
    },
  );

  it("regression: malformed tool arguments cost a tool call as an invalid_fields observation; a 400 then stops the run with the redacted provider message", async () => {
    await setUp((_req, i) => {
      if (i === 0) return toolCallReply("read_file", '{"path": "src/linkcheck.js",', "call_broken");
      return errorReply(400, `context too long for key ${KEY}`);
    });
    const runId = await start("ws-malformed");
    const done = await runs.settled(runId);
    expect(done.status).toBe("failed");
    expect(done.counters.tool_calls).toBe(1);
    const observed = (await runs.events(runId, 0, 0)).find((e) => e.type === "tool_observed");
    expect(observed?.payload).toMatchObject({ ok: false, error: "invalid_fields" });
    // the model was shown the error: the second request carries it
    expect(envelopes(server.requests[1]!)[0]).toMatchObject({ call_id: "call_broken", ok: false, error: { code: "invalid_fields" } });
    expect(done.reason).toContain("HTTP 400");
    expect(done.reason).not.toContain(KEY);
    expect(server.requests).toHaveLength(2); // a 4xx is not retried
    await recorder.settled(runId);
    // the provider echoed the key: it reached neither the ledger, the trace nor the record
    expect(runs.traceJsonl(runId)).not.toContain(KEY);
    expect(filesContaining(stateDir, KEY)).toEqual([]);
  });

  it("JSON-action mode through the runtime: prose instead of an action is an observation that costs a tool call, shown to the model next turn", async () => {
    await setUp(
      (_req, i) => {
        if (i === 0) return textReply('{"kind":"tool","call":{"name":"read_file","arguments":{"path":"src/linkcheck.js"}}}');
        if (i === 1) return textReply("Sure! I will now fix the bug.");
        return errorReply(400, "stop here");
      },
      { mode: "json" },
    );
    const runId = await start("ws-json");
    const done = await runs.settled(runId);
    expect(done.status).toBe("failed");
    expect(done.counters.tool_calls).toBe(2);
    const observed = (await runs.events(runId, 0, 0)).filter((e) => e.type === "tool_observed").map((e) => [e.payload.tool, e.payload.ok, e.payload.error]);
    expect(observed).toEqual([
      ["read_file", true, null],
      ["invalid_output", false, "unknown_tool"],
    ]);
    const third = server.requests[2]!.body;
    expect(third.tools).toBeUndefined();
    const sent = third.messages as Msg[];
    expect(sent.some((m) => m.role === "tool" || m.tool_calls !== undefined)).toBe(false);
    const results = sent.filter((m) => m.role === "user" && String(m.content).startsWith("Result of call"));
    expect(results).toHaveLength(2);
    expect(results[1]!.content).toContain("unknown_tool");
    // the model sees why: the rewritten call it "made" carries the problem, right before the result
    const before = sent[sent.indexOf(results[1]!) - 1]!;
    expect(before.role).toBe("assistant");
    expect(before.content).toContain("reply is not one JSON object");
  });

  it("the token budget counts the provider's usage: a run that spends it stops as budget_exhausted, resumable, and its record says so", async () => {
    // each plan turn reports 100 prompt + 10 completion tokens (textReply's usage)
    await setUp(() => textReply("Still thinking about the links."));
    const runId = await start("ws-tokens", { tokens: 300 });
    const done = await runs.settled(runId);
    expect(done.status).toBe("budget_exhausted");
    expect(done.counters).toMatchObject({ model_turns: 3, prompt_tokens: 300, completion_tokens: 30 });
    expect(server.requests).toHaveLength(3);
    await recorder.settled(runId);
    const [record] = (await listLiveRunRecords(stateDir)).filter((r) => r.run_id === runId);
    expect(record).toMatchObject({ status: "budget_exhausted", usage: { prompt_tokens: 300, completion_tokens: 30 }, budgets: { tokens: 300 } });

    // resumed with a larger budget it continues (through the gate again) and leaves a second record
    await runs.resume(runId, { tokens: 500 });
    const again = await runs.settled(runId);
    expect(again.status).toBe("budget_exhausted");
    expect(again.counters).toMatchObject({ model_turns: 5, prompt_tokens: 500 });
    await recorder.settled(runId);
    const records = (await listLiveRunRecords(stateDir)).filter((r) => r.run_id === runId);
    expect(records.map((r) => [r.status, r.usage.prompt_tokens, r.budgets.tokens])).toEqual([
      ["budget_exhausted", 300, 300],
      ["budget_exhausted", 500, 500],
    ]);
  });
});
