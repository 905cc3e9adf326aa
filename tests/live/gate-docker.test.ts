import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Docker from "dockerode";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createCredentialSource, type CredentialSource } from "../../daemon/src/credentials/credential-source.js";
import type { IsolationKey, IsolationReportSummary } from "../../daemon/src/gate/isolation-facts.js";
import { checkLiveGate } from "../../daemon/src/gate/live-gate.js";
import { createLiveModelFactory } from "../../daemon/src/gate/live-model-factory.js";
import { sandboxIsolationFacts } from "../../daemon/src/gate/sandbox-facts.js";
import { resolveLiveModelConfig } from "../../daemon/src/models/live/config.js";
import { resolveSandboxConfig } from "../../daemon/src/sandbox/config.js";
import { createDockerClient } from "../../daemon/src/sandbox/docker-client.js";
import { recordImage } from "../../daemon/src/sandbox/image-lock.js";
import { startFakeProvider, textReply, type FakeProvider } from "./openai-server.js";
import { pinTestImage } from "../kit/sandbox-image.js";

/**
 * The gate's engine facts against the REAL Docker engine (no container is
 * started). The probes' report store is passed in as a reader, as the daemon does.
 */
describe("live gate on the real engine", () => {
  let dir: string;
  let server: FakeProvider;
  let credentials: CredentialSource;
  const docker = createDockerClient(process.env);

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "mini-agent-gate-docker-"));
    fs.writeFileSync(path.join(dir, "credentials.json"), JSON.stringify({ api_key: "sk-gate-docker-canary-0123456789" }), { mode: 0o600 });
    credentials = createCredentialSource({ env: new Map(), filePath: path.join(dir, "credentials.json") });
    server = await startFakeProvider(() => textReply("FINAL: x"));
  });
  afterEach(async () => {
    await server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function refuseThroughFactory(facts: ReturnType<typeof sandboxIsolationFacts>, reason: string) {
    const config = resolveLiveModelConfig({ MINI_AGENT_BASE_URL: server.baseUrl, MINI_AGENT_MODEL: "fake-model" });
    const factory = createLiveModelFactory({ facts, config, credentials });
    await expect(factory({ runId: "r", task: { forbidden: [] }, backend: "container" })).rejects.toMatchObject({
      code: "isolation_unverified",
      details: { reason, refresh_command: "mini-agent-client probe" },
    });
    expect(credentials.reads).toBe(0);
    expect(server.requests).toHaveLength(0);
  }

  it("an unreachable engine is runtime_unavailable", async () => {
    const facts = sandboxIsolationFacts({
      docker: new Docker({ socketPath: path.join(dir, "no-engine.sock") }),
      sandbox: resolveSandboxConfig({}),
      lockPath: path.join(dir, "sandbox-image.lock.json"),
      readReport: async () => {
        throw new Error("must not be asked");
      },
    });
    await refuseThroughFactory(facts, "runtime_unavailable");
  });

  it("no image lock, or a pinned digest the engine does not have, is image_missing", async () => {
    const lockPath = path.join(dir, "sandbox-image.lock.json");
    const facts = sandboxIsolationFacts({ docker, sandbox: resolveSandboxConfig({}), lockPath, readReport: async () => null });
    await refuseThroughFactory(facts, "image_missing");
    await recordImage(lockPath, "node", { tag: "mini-agent/none:gone", digest: `sha256:${"0".repeat(64)}`, built_at: "2026-01-01T00:00:00Z" });
    await refuseThroughFactory(facts, "image_missing");
  });

  it("with a present pinned image the key carries the engine version, runtime and HostConfig hash; the report decides", async () => {
    // the suite's own pinned node image: "any image in the engine" could be removed by a concurrent test (image_missing)
    const lockPath = path.join(dir, "sandbox-image.lock.json");
    const pinned = await pinTestImage(lockPath, "node", docker);
    const image = { Id: pinned.digest };
    const seen: IsolationKey[] = [];
    let report: IsolationReportSummary | null = null;
    const facts = sandboxIsolationFacts({
      docker,
      sandbox: resolveSandboxConfig({}),
      lockPath,
      readReport: async (key) => {
        seen.push(key);
        return report;
      },
    });
    const version = await docker.version();
    const now = Date.now();
    expect(await checkLiveGate({ backend: "container", facts, clock: () => now })).toMatchObject({ ok: false, reason: "report_stale" });
    expect(seen[0]).toMatchObject({ image_digest: image.Id, engine_version: version.Version, runtime: "runc" });
    expect(seen[0]!.host_config_hash).toMatch(/^sha256:[0-9a-f]{64}$/);
    report = { passed: true, generated_at: new Date(now - 60_000).toISOString(), failed_probe_ids: [] };
    expect(await checkLiveGate({ backend: "container", facts, clock: () => now })).toMatchObject({ ok: true, key: seen[0] });
    report = { passed: false, generated_at: new Date(now - 60_000).toISOString(), failed_probe_ids: ["mount.rootfs_readonly"] };
    await refuseThroughFactory(facts, "probe_failed:mount.rootfs_readonly");
  });

  it("regression: a passing runc report unlocked a live run that asked for runsc; the gate keys the report by family AND runtime", async () => {
    const lockPath = path.join(dir, "sandbox-image.lock.json");
    await pinTestImage(lockPath, "node", docker);
    const passed: IsolationReportSummary = { passed: true, generated_at: new Date().toISOString(), failed_probe_ids: [] };
    // the report store has a passing report for the runc key only (as after `probe` on a runc daemon)
    const proven = new Set<string>(["runc"]);
    const seen: IsolationKey[] = [];
    const overrides = (family?: string, runtime?: "runc" | "runsc") => ({ runtime: runtime ?? "runc", ...(family ? { imageFamily: family } : {}) });
    const facts = sandboxIsolationFacts({
      docker,
      sandbox: resolveSandboxConfig(overrides()),
      sandboxFor: (family, runtime) => resolveSandboxConfig(overrides(family, runtime)),
      lockPath,
      readReport: async (key) => {
        seen.push(key);
        return proven.has(key.runtime) ? passed : null;
      },
    });
    const config = resolveLiveModelConfig({ MINI_AGENT_BASE_URL: server.baseUrl, MINI_AGENT_MODEL: "fake-model" });
    const factory = createLiveModelFactory({ facts, config, credentials });
    const req = { runId: "r", task: { forbidden: [] }, backend: "container" as const, imageFamily: "node", runtime: "runsc" as const };
    await expect(factory(req)).rejects.toMatchObject({ code: "isolation_unverified", details: { reason: "report_stale" } });
    expect(seen.at(-1)).toMatchObject({ image_family: "node", runtime: "runsc" });
    // the two runtimes' HostConfigs differ, so their reports never stand in for each other
    const runcKey = await facts.currentKey("node");
    expect(runcKey.ok && runcKey.key.runtime).toBe("runc");
    expect(runcKey.ok && runcKey.key.host_config_hash).not.toBe(seen.at(-1)!.host_config_hash);
    expect(credentials.reads).toBe(0);
    expect(server.requests).toHaveLength(0);
    // once runsc is proven too, the same request passes
    proven.add("runsc");
    expect(await checkLiveGate({ backend: "container", facts, family: "node", runtime: "runsc" })).toMatchObject({ ok: true, key: { runtime: "runsc" } });
  });
});
