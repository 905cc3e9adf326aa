import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { statePath } from "../../daemon/src/config/state-dir.js";
import { isMiniAgentError } from "../../daemon/src/errors.js";
import { createDockerClient } from "../../daemon/src/sandbox/docker-client.js";
import { DockerExecutor } from "../../daemon/src/sandbox/docker-executor.js";
import { recordImage } from "../../daemon/src/sandbox/image-lock.js";
import { LocalExecutor } from "../../daemon/src/sandbox/local-executor.js";
import { createRunService, type RunServiceImpl } from "../../daemon/src/runtime/service-impl.js";
import { containerExecutor, expectStatus, leftovers, LINKCHECK, service, tempDir } from "./harness.js";

process.env.TESTCONTAINERS_RYUK_DISABLED = "true";

async function refusal(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await p;
  } catch (err) {
    if (isMiniAgentError(err)) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error("expected a refusal");
}

describe("createRun refuses before anything exists, and one run holds a workspace", () => {
  let root: string;
  let executor: DockerExecutor;
  let runs: RunServiceImpl;
  const runIds: string[] = [];

  beforeAll(async () => {
    root = tempDir("create");
    executor = await containerExecutor(path.join(root, "state"));
    runs = service(path.join(root, "state"), executor);
  });
  afterAll(async () => {
    for (const id of runIds) if (runs.getRun(id).status === "awaiting_approval") await runs.cancel(id);
    await runs.shutdown();
    expect(await leftovers(runIds)).toEqual([]);
    fs.rmSync(root, { recursive: true, force: true });
  });

  it("refuses a non-canonical replay on trusted_local without trustReplayFile (replay_untrusted) before the workspace is created", async () => {
    const workspace = path.join(root, "ws-untrusted");
    const r = await refusal(
      runs.createRun({
        workspace,
        fixtureDir: LINKCHECK,
        replayPath: path.join(LINKCHECK, "replays", "unknown-tool.json"),
        model: "replay",
        trustReplayFile: false,
        backend: "trusted_local",
      }),
    );
    expect(r.code).toBe("replay_untrusted");
    expect(fs.existsSync(workspace)).toBe(false);
    expect(runs.listRuns()).toHaveLength(0);
  });

  it("accepts the same replay with trustReplayFile, and any replay on the container backend", async () => {
    const a = await runs.createRun({
      workspace: path.join(root, "ws-trusted"),
      fixtureDir: LINKCHECK,
      replayPath: path.join(LINKCHECK, "replays", "unknown-tool.json"),
      model: "replay",
      trustReplayFile: true,
      backend: "trusted_local",
    });
    runIds.push(a.run_id);
    const b = await runs.createRun({
      workspace: path.join(root, "ws-container"),
      fixtureDir: LINKCHECK,
      replayPath: path.join(LINKCHECK, "replays", "unknown-tool.json"),
      model: "replay",
      trustReplayFile: false,
      backend: "container",
    });
    runIds.push(b.run_id);
    // unknown_tool is an observation for the model, and the manifest is unchanged
    const done = await runs.settled(b.run_id);
    const observed = (await runs.events(b.run_id, 0, 0)).filter((e) => e.type === "tool_observed").map((e) => e.payload.error);
    expect(observed).toContain("unknown_tool");
    expect(await runs.diff(b.run_id)).toBe("");
    expect(done.counters.writes).toBe(0);
    await runs.settled(a.run_id);
  });

  it("refuses an invalid replay file with the zod path (invalid_replay) and creates nothing", async () => {
    const bad = path.join(root, "bad-replay.json");
    fs.writeFileSync(
      bad,
      JSON.stringify({ schema_version: 1, decisions: [{ kind: "tool", call: { call_id: "c1", name: "read_file", arguments: {}, extra: 1 } }] }),
    );
    const workspace = path.join(root, "ws-bad-replay");
    const r = await refusal(
      runs.createRun({ workspace, fixtureDir: LINKCHECK, replayPath: bad, model: "replay", trustReplayFile: true, backend: "container" }),
    );
    expect(r.code).toBe("invalid_replay");
    expect(r.message).toContain("decisions[0].call");
    expect(fs.existsSync(workspace)).toBe(false);
  });

  it("refuses a replay file with an unknown schema_version (invalid_replay), never reinterpreting it", async () => {
    const bad = path.join(root, "v2-replay.json");
    fs.writeFileSync(bad, JSON.stringify({ schema_version: 2, decisions: [{ kind: "final", text: "done" }] }));
    const r = await refusal(
      runs.createRun({
        workspace: path.join(root, "ws-v2"),
        fixtureDir: LINKCHECK,
        replayPath: bad,
        model: "replay",
        trustReplayFile: true,
        backend: "container",
      }),
    );
    expect(r.code).toBe("invalid_replay");
  });

  it("refuses a live model on trusted_local (backend_not_isolated) and live models when none are configured", async () => {
    const base = { fixtureDir: LINKCHECK, model: "live" as const, trustReplayFile: false };
    expect((await refusal(runs.createRun({ ...base, workspace: path.join(root, "ws-live-1"), backend: "trusted_local" }))).code).toBe("backend_not_isolated");
    expect((await refusal(runs.createRun({ ...base, workspace: path.join(root, "ws-live-2"), backend: "container" }))).code).toBe("invalid_request");
    expect(fs.existsSync(path.join(root, "ws-live-1"))).toBe(false);
    expect(fs.existsSync(path.join(root, "ws-live-2"))).toBe(false);
  });

  it("refuses a sandbox_include glob outside the workspace (invalid_request) before the workspace is created", async () => {
    for (const glob of ["../outside/.env", "/etc/shadow"]) {
      const workspace = path.join(root, "ws-include");
      const r = await refusal(
        runs.createRun({ workspace, fixtureDir: LINKCHECK, model: "replay", trustReplayFile: false, backend: "container", sandboxInclude: [glob] }),
      );
      expect(r.code).toBe("invalid_request");
      expect(r.message).toContain("sandbox_include");
      expect(fs.existsSync(workspace)).toBe(false);
    }
  });

  it("refuses an invalid task spec (invalid_task_spec) and an existing workspace for a fixture run", async () => {
    const spec = JSON.parse(fs.readFileSync(path.join(LINKCHECK, "task.json"), "utf8"));
    const workspace = path.join(root, "ws-spec");
    fs.cpSync(path.join(LINKCHECK, "repo"), workspace, { recursive: true });
    const r = await refusal(
      runs.createRun({
        workspace,
        taskSpec: { ...spec, surprise: true },
        controlDir: path.join(LINKCHECK, "control"),
        replayPath: path.join(LINKCHECK, "replay.json"),
        model: "replay",
        trustReplayFile: false,
        backend: "container",
      }),
    );
    expect(r.code).toBe("invalid_task_spec");
    expect((await refusal(runs.createRun({ workspace, fixtureDir: LINKCHECK, model: "replay", trustReplayFile: false, backend: "container" }))).code).toBe(
      "invalid_request",
    );
  });

  it("allows one active run per workspace (workspace_busy) while runs on other workspaces go on at the same time", async () => {
    const spec = JSON.parse(fs.readFileSync(path.join(LINKCHECK, "task.json"), "utf8"));
    const ws1 = path.join(root, "ws-busy-1");
    const ws2 = path.join(root, "ws-busy-2");
    for (const ws of [ws1, ws2]) fs.cpSync(path.join(LINKCHECK, "repo"), ws, { recursive: true });
    const input = (workspace: string) => ({
      workspace,
      taskSpec: spec,
      controlDir: path.join(LINKCHECK, "control"),
      replayPath: path.join(LINKCHECK, "replay.json"),
      model: "replay" as const,
      trustReplayFile: false,
      backend: "container" as const,
    });
    const [one, two, clash] = await Promise.allSettled([runs.createRun(input(ws1)), runs.createRun(input(ws2)), runs.createRun(input(ws1))]);
    expect(one.status).toBe("fulfilled");
    expect(two.status).toBe("fulfilled");
    expect(clash.status === "rejected" && isMiniAgentError(clash.reason) ? clash.reason.code : clash.status).toBe("workspace_busy");
    const ids = [one, two].map((r) => (r as PromiseFulfilledResult<{ run_id: string }>).value.run_id);
    runIds.push(...ids);
    for (const id of ids) expectStatus(await runs.settled(id), "awaiting_approval");
    // still busy while awaiting approval; free again once the run is cancelled
    expect((await refusal(runs.createRun(input(ws1)))).code).toBe("workspace_busy");
    await runs.cancel(ids[0]!);
    const again = await runs.createRun(input(ws1));
    runIds.push(again.run_id);
    await runs.settled(again.run_id);
  });
});

describe("createRun on the container backend checks the engine and the pinned image first (regression: a run without its image asked for approvals, wrote, then failed at run_tests)", () => {
  let root: string;
  beforeAll(() => {
    root = tempDir("preflight");
  });
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  /** A fresh state dir whose image lock is written by `lock` (or absent), and a service over it. */
  async function serviceWith(name: string, lock: ((lockPath: string) => Promise<unknown>) | null, docker = createDockerClient({})) {
    const stateDir = path.join(root, name, "state");
    fs.mkdirSync(stateDir, { recursive: true });
    const lockPath = statePath(stateDir, "imageLock");
    if (lock) await lock(lockPath);
    const runs = service(stateDir, new DockerExecutor({ lockPath, docker }));
    return { stateDir, runs };
  }

  async function expectNothingCreated(stateDir: string, runs: RunServiceImpl, workspace: string, code: string, hint: string) {
    const r = await refusal(runs.createRun({ workspace, fixtureDir: LINKCHECK, model: "replay", trustReplayFile: false, backend: "container" }));
    expect(r.code).toBe(code);
    expect(r.message).toContain(hint);
    expect(fs.existsSync(workspace)).toBe(false);
    expect(runs.listRuns()).toEqual([]);
    const controlRoot = statePath(stateDir, "controlRoot");
    expect(fs.existsSync(controlRoot) ? fs.readdirSync(controlRoot) : []).toEqual([]);
    await runs.shutdown();
  }

  it("refuses a lock naming a digest the engine does not have (image_missing, says how to rebuild for this state dir)", async () => {
    const { stateDir, runs } = await serviceWith("absent-digest", (lockPath) =>
      recordImage(lockPath, "node", { tag: "mini-agent-sandbox:gone", digest: `sha256:${"0".repeat(64)}`, built_at: "1970-01-01T00:00:00.000Z" }),
    );
    await expectNothingCreated(stateDir, runs, path.join(root, "absent-digest", "ws"), "image_missing", `npm run image:build -- --state-dir ${stateDir}`);
  });

  it("refuses a state dir without an image lock (image_missing)", async () => {
    const { stateDir, runs } = await serviceWith("no-lock", null);
    await expectNothingCreated(stateDir, runs, path.join(root, "no-lock", "ws"), "image_missing", "npm run image:build");
  });

  it("refuses when no engine answers (runtime_unavailable, says how to start one)", async () => {
    const gone = createDockerClient({ DOCKER_HOST: `unix://${path.join(root, "no-engine.sock")}` });
    const { stateDir, runs } = await serviceWith("no-engine", null, gone);
    await expectNothingCreated(stateDir, runs, path.join(root, "no-engine", "ws"), "runtime_unavailable", "npm run docker:ensure");
  });
});

describe("a create that fails part-way leaves nothing behind", () => {
  let root: string;
  beforeAll(() => {
    root = tempDir("create-fails");
  });
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  it("a failure after the control folder was copied removes the copy, the staging folder and the new workspace", async () => {
    const stateDir = path.join(root, "state");
    // the baseline cannot be made (e.g. a full disk): only reachable by injecting it
    const runs = createRunService({
      stateDir,
      executorFactory: () => new LocalExecutor(),
      tools: { captureBaseline: async () => Promise.reject(new Error("ENOSPC: no space left on device")) },
    });
    const workspace = path.join(root, "ws");
    const r = await refusal(runs.createRun({ workspace, fixtureDir: LINKCHECK, model: "replay", trustReplayFile: false, backend: "trusted_local" }));
    expect(r.code).toBe("internal");
    expect(r.message).not.toContain("ENOSPC");
    expect(fs.existsSync(workspace)).toBe(false);
    expect(runs.listRuns()).toEqual([]);
    expect(fs.readdirSync(statePath(stateDir, "controlRoot"))).toEqual([]);
    await runs.shutdown();
  });

  it("a daemon killed during a create leaves a staging folder (or an unknown run's folder) that the next start removes", async () => {
    const stateDir = path.join(root, "state-killed");
    const controlRoot = statePath(stateDir, "controlRoot");
    for (const n of [".creating-run_0123456789abcdef0123", "run_0123456789abcdef0123"])
      fs.mkdirSync(path.join(controlRoot, n, "acceptance"), { recursive: true });
    const runs = createRunService({ stateDir, executorFactory: () => new LocalExecutor() });
    await runs.recoverAtStartup();
    expect(fs.readdirSync(controlRoot)).toEqual([]);
    await runs.shutdown();
  });
});
