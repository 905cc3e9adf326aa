import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runIsolationProbes } from "../../probes/run.js";
import type { IsolationReport, UnavailableReport } from "../../probes/types.js";
import { statePath } from "../../daemon/src/config/state-dir.js";
import { createCredentialSource } from "../../daemon/src/credentials/credential-source.js";
import { checkLiveGate, LIVE_GATE_DEFAULTS } from "../../daemon/src/gate/live-gate.js";
import { createLiveModelFactory } from "../../daemon/src/gate/live-model-factory.js";
import { readIsolationReportSummary } from "../../daemon/src/gate/probe-report.js";
import { sandboxIsolationFacts } from "../../daemon/src/gate/sandbox-facts.js";
import { resolveLiveModelConfig } from "../../daemon/src/models/live/config.js";
import { resolveSandboxConfig } from "../../daemon/src/sandbox/config.js";
import { createDockerClient } from "../../daemon/src/sandbox/docker-client.js";
import { containerExecutor, tempDir } from "../runtime/harness.js";
import { startFakeProvider, textReply } from "./openai-server.js";

process.env.TESTCONTAINERS_RYUK_DISABLED = "true";

/**
 * The whole gate on real parts: the isolation probes run for real against the
 * pinned image, their report is stored, and the gate reads it back through the
 * engine's current key. Whatever the probes find decides the verdict: a full
 * pass opens the gate, a failed probe is named in the refusal.
 */
describe("live gate with a report from the real isolation probes", () => {
  let root: string;
  let stateDir: string;
  let report: IsolationReport | UnavailableReport;
  const docker = createDockerClient({});

  beforeAll(async () => {
    root = tempDir("gate-probes");
    stateDir = path.join(root, "state");
    await containerExecutor(stateDir); // builds (or reuses) the image and pins it in this state dir
    report = await runIsolationProbes({ stateDir, docker, hostEnv: { ...process.env } });
  });
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  function facts() {
    return sandboxIsolationFacts({
      docker,
      sandbox: resolveSandboxConfig({}),
      lockPath: statePath(stateDir, "imageLock"),
      readReport: (key) => readIsolationReportSummary(stateDir, key),
    });
  }

  it("the stored report is found under the gate's current key and decides the verdict", async () => {
    expect(report.available).toBe(true);
    if (!report.available) return;
    const now = Date.parse(report.generated_at) + 60_000;
    const verdict = await checkLiveGate({ backend: "container", facts: facts(), clock: () => now });
    if (report.passed) {
      expect(verdict).toMatchObject({ ok: true, report_generated_at: report.generated_at });
    } else {
      const firstFailed = report.probes.find((p) => !p.passed)!.id;
      expect(verdict).toMatchObject({ ok: false, reason: `probe_failed:${firstFailed}` });
    }
  });

  it("the same report 24 h and a minute later is stale, refused with no key read and no request", async (ctx) => {
    if (!report.available || !report.passed) return ctx.skip(); // the failing case is covered above
    const server = await startFakeProvider(() => textReply("FINAL: x"));
    try {
      const credFile = path.join(root, "credentials.json");
      fs.writeFileSync(credFile, JSON.stringify({ api_key: "sk-probes-canary-0123456789abcdef" }), { mode: 0o600 });
      const credentials = createCredentialSource({ env: new Map(), filePath: credFile });
      const later = Date.parse(report.generated_at) + LIVE_GATE_DEFAULTS.maxReportAgeMs + 60_000;
      const factory = createLiveModelFactory({
        facts: facts(),
        config: resolveLiveModelConfig({ MINI_AGENT_BASE_URL: server.baseUrl, MINI_AGENT_MODEL: "m" }),
        credentials,
        clock: () => later,
      });
      await expect(factory({ runId: "r", task: { forbidden: [] }, backend: "container" })).rejects.toMatchObject({
        code: "isolation_unverified",
        details: { reason: "report_stale" },
      });
      expect(credentials.reads).toBe(0);
      expect(server.requests).toHaveLength(0);
    } finally {
      await server.close();
    }
  });

  it("a different runtime is a different key: the runc report does not open the gate for runsc", async (ctx) => {
    if (!report.available) return ctx.skip();
    const runsc = sandboxIsolationFacts({
      docker,
      sandbox: resolveSandboxConfig({ runtime: report.runtime === "runc" ? "runsc" : "runc" }),
      lockPath: statePath(stateDir, "imageLock"),
      readReport: (key) => readIsolationReportSummary(stateDir, key),
    });
    const verdict = await checkLiveGate({ backend: "container", facts: runsc, clock: () => Date.parse(report.generated_at) });
    expect(verdict.ok).toBe(false);
  });
});
