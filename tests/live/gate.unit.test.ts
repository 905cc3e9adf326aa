import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Agent } from "undici";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createCredentialSource, type CredentialSource } from "../../daemon/src/credentials/credential-source.js";
import { isMiniAgentError } from "../../daemon/src/errors.js";
import type { IsolationFacts, IsolationKey, IsolationReportSummary } from "../../daemon/src/gate/isolation-facts.js";
import { checkLiveGate, LIVE_GATE_DEFAULTS } from "../../daemon/src/gate/live-gate.js";
import { createLiveModelFactory } from "../../daemon/src/gate/live-model-factory.js";
import { resolveLiveModelConfig } from "../../daemon/src/models/live/config.js";
import type { LiveModel } from "../../daemon/src/models/live/live-model.js";
import { startFakeProvider, textReply, type FakeProvider } from "./openai-server.js";

const NOW = Date.parse("2026-11-30T12:00:00Z");
const HOUR = 3_600_000;
const KEY: IsolationKey = {
  image_family: "node",
  image_digest: `sha256:${"a".repeat(64)}`,
  host_config_hash: `sha256:${"b".repeat(64)}`,
  engine_version: "20.10.24",
  runtime: "runc",
};

/**
 * Isolation facts as the gate sees them, one wrong at a time. The gate's
 * verdicts on the REAL engine are in gate-docker.test.ts; here the point is the
 * order and that a refusal touches neither the key nor the network.
 */
function facts(opts: { engine?: "ok" | "runtime_unavailable" | "image_missing" | "throws"; report?: IsolationReportSummary | null }) {
  const calls = { currentKey: 0, latestReport: 0 };
  const f: IsolationFacts = {
    async currentKey() {
      calls.currentKey++;
      const engine = opts.engine ?? "ok";
      if (engine === "throws") throw new Error("engine exploded");
      if (engine !== "ok") return { ok: false, reason: engine, detail: `${engine} for the test` };
      return { ok: true, key: KEY };
    },
    async latestReport(key) {
      calls.latestReport++;
      expect(key).toEqual(KEY);
      return opts.report === undefined ? passing(1) : opts.report;
    },
  };
  return { f, calls };
}

function passing(hoursAgo: number): IsolationReportSummary {
  return { passed: true, generated_at: new Date(NOW - hoursAgo * HOUR).toISOString(), failed_probe_ids: [] };
}

describe("live gate", () => {
  let dir: string;
  let server: FakeProvider;
  let dispatcher: Agent;
  let credentials: CredentialSource;

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "mini-agent-gate-"));
    // the key comes from the real file source; its reads are counted
    fs.writeFileSync(path.join(dir, "credentials.json"), JSON.stringify({ api_key: "sk-gate-canary-0123456789abcdef" }), { mode: 0o600 });
    credentials = createCredentialSource({ env: new Map(), filePath: path.join(dir, "credentials.json") });
    server = await startFakeProvider(() => textReply("FINAL: nothing"));
    dispatcher = new Agent();
  });
  afterEach(async () => {
    await server.close();
    await dispatcher.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** the runtime's model factory, counting how often it asked where the workspace is */
  async function open(backend: "container" | "trusted_local", f: IsolationFacts) {
    let prepared = 0;
    const config = resolveLiveModelConfig({ MINI_AGENT_BASE_URL: server.baseUrl, MINI_AGENT_MODEL: "fake-model" });
    const factory = createLiveModelFactory({
      facts: f,
      config,
      credentials,
      dispatcher,
      clock: () => NOW,
      workspaceOf: () => {
        prepared++;
        return null;
      },
    });
    const result = await factory({ runId: "run_g", task: { forbidden: [] }, backend }).catch((e: unknown) => e);
    return { result, prepared };
  }

  const refusals: Array<[string, "container" | "trusted_local", Parameters<typeof facts>[0], string]> = [
    ["trusted_local backend", "trusted_local", {}, "backend_not_isolated"],
    ["engine unreachable", "container", { engine: "runtime_unavailable" }, "runtime_unavailable"],
    ["engine query throws", "container", { engine: "throws" }, "runtime_unavailable"],
    ["pinned image missing", "container", { engine: "image_missing" }, "image_missing"],
    [
      "latest report failed a probe",
      "container",
      { report: { passed: false, generated_at: new Date(NOW).toISOString(), failed_probe_ids: ["net.route_table_empty", "caps.bounding_zero"] } },
      "probe_failed:net.route_table_empty",
    ],
    ["no report for the current key", "container", { report: null }, "report_stale"],
    ["report older than 24 h", "container", { report: passing(25) }, "report_stale"],
    ["report dated in the future", "container", { report: passing(-2) }, "report_stale"],
  ];

  it.each(refusals)(
    "refuses (%s) with isolation_unverified, ZERO requests, the key never read, the workspace never asked for",
    async (_name, backend, opts, reason) => {
      const { f } = facts(opts);
      const { result, prepared } = await open(backend, f);
      expect(isMiniAgentError(result, "isolation_unverified")).toBe(true);
      if (isMiniAgentError(result)) expect(result.details).toEqual({ reason, refresh_command: "mini-agent-client probe" });
      expect(prepared).toBe(0);
      expect(credentials.reads).toBe(0);
      expect(server.requests).toHaveLength(0);
    },
  );

  it("checks in order: a non-container backend never queries the engine; an engine failure never looks for a report", async () => {
    const a = facts({ engine: "image_missing" });
    expect(await checkLiveGate({ backend: "trusted_local", facts: a.f, clock: () => NOW })).toMatchObject({ ok: false, reason: "backend_not_isolated" });
    expect(a.calls).toEqual({ currentKey: 0, latestReport: 0 });
    const b = facts({ engine: "runtime_unavailable", report: { passed: false, generated_at: "x", failed_probe_ids: ["p"] } });
    expect(await checkLiveGate({ backend: "container", facts: b.f, clock: () => NOW })).toMatchObject({ ok: false, reason: "runtime_unavailable" });
    expect(b.calls).toEqual({ currentKey: 1, latestReport: 0 });
  });

  it("the maximum report age is configurable: a 2 h old report passes the default and is stale under a 1 h limit", async () => {
    const { f } = facts({ report: passing(2) });
    expect(await checkLiveGate({ backend: "container", facts: f, clock: () => NOW })).toMatchObject({ ok: true });
    expect(await checkLiveGate({ backend: "container", facts: f, clock: () => NOW, maxReportAgeMs: HOUR })).toMatchObject({
      ok: false,
      reason: "report_stale",
    });
    expect(LIVE_GATE_DEFAULTS.maxReportAgeMs).toBe(24 * HOUR);
  });

  it("passes with a fresh passing report; the key is read and the server contacted only on the first decision", async () => {
    const { f } = facts({ report: passing(1) });
    const { result } = await open("container", f);
    expect(isMiniAgentError(result)).toBe(false);
    expect(credentials.reads).toBe(0);
    expect(server.requests).toHaveLength(0);
    const model = result as LiveModel;
    const turn = await model.decide({ runId: "r", messages: [{ role: "system", content: "S" }], tools: [] }, new AbortController().signal);
    expect(turn.decision).toEqual({ kind: "final", text: "nothing" });
    expect(credentials.reads).toBe(1);
    expect(server.requests).toHaveLength(1);
  });

  it("the runtime's factory: refuses before the workspace exists; on a pass builds the project context and reads the key only at the first turn", async () => {
    const workspace = path.join(dir, "ws");
    const config = resolveLiveModelConfig({ MINI_AGENT_BASE_URL: server.baseUrl, MINI_AGENT_MODEL: "fake-model" });
    const req = { runId: "run_f", task: { forbidden: [] }, backend: "container" as const };
    const refusing = createLiveModelFactory({
      facts: facts({ report: passing(30) }).f,
      config,
      credentials,
      dispatcher,
      clock: () => NOW,
      workspaceOf: () => ({ root: workspace }),
    });
    await expect(refusing(req)).rejects.toMatchObject({ code: "isolation_unverified", details: { reason: "report_stale" } });
    expect(credentials.reads).toBe(0);
    expect(server.requests).toHaveLength(0);

    const factory = createLiveModelFactory({
      facts: facts({ report: passing(1) }).f,
      config,
      credentials,
      dispatcher,
      clock: () => NOW,
      workspaceOf: () => ({ root: workspace }),
    });
    const model = await factory(req);
    // the workspace is prepared only after the gate passed
    fs.mkdirSync(path.join(workspace, "src"), { recursive: true });
    fs.writeFileSync(path.join(workspace, "AGENTS.md"), "Run the tests with node --test.\n");
    fs.writeFileSync(path.join(workspace, "src", "linkcheck.js"), "export {};\n");
    expect(credentials.reads).toBe(0);
    await model.decide({ runId: "run_f", messages: [{ role: "system", content: "RUN_STATE {}" }], tools: [] }, new AbortController().signal);
    expect(credentials.reads).toBe(1);
    const sent = server.requests[0]!.body.messages as Array<{ role: string; content: string }>;
    expect(sent[0]!.content).toContain("Act ONLY through the provided tools");
    expect(sent[0]!.content).toContain("RUN_STATE {}");
    expect(sent[1]!.content).toContain("Run the tests with node --test.");
    expect(sent[1]!.content).toContain("src/linkcheck.js 11");
    expect(model.facts()).toMatchObject({
      model: "fake-model",
      providerHost: new URL(server.baseUrl).host,
      isolationReportGeneratedAt: passing(1).generated_at,
    });
  });
});
