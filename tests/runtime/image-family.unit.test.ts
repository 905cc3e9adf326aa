// The run's image family reaches every part (issue 11): the create-time preflight, the
// executor its driver (warm session, Verifier, acceptance) uses, the live model factory
// (and so the live gate), the run view and the trace, and a run driven again after a
// daemon restart. trusted_local host processes stand in for the sandbox: what is checked
// is WHICH family each part asked for, which needs no engine.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Backend } from "../../daemon/src/contracts/sandbox.js";
import { TaskSpec } from "../../daemon/src/contracts/task-spec.js";
import type { ImageFamily } from "../../daemon/src/contracts/test-report.js";
import { MiniAgentError, isMiniAgentError } from "../../daemon/src/errors.js";
import type { ExecutorFactory, LiveModelRequest } from "../../daemon/src/runtime/ports.js";
import { createRunService } from "../../daemon/src/runtime/service-impl.js";
import type { Executor } from "../../daemon/src/sandbox/executor.js";
import { LocalExecutor } from "../../daemon/src/sandbox/local-executor.js";
import { expectStatus, LINKCHECK, tempDir } from "./harness.js";

interface Asked {
  backend: Backend;
  family: ImageFamily;
  what: "preflight" | "drive";
}

/** A factory that records what each caller asked for; preflight is the executor's own, so it is told apart. */
function recordingFactory(asked: Asked[], preflightFails: () => boolean = () => false): ExecutorFactory {
  const local = new LocalExecutor();
  return (backend, family) => {
    const executor: Executor = {
      kind: local.kind,
      run: (req) => local.run(req),
      openSession: (runId) => local.openSession(runId),
      describe: () => local.describe(),
      preflight: async () => {
        asked.push({ backend, family, what: "preflight" });
        if (preflightFails()) throw new MiniAgentError("runtime_unavailable", "no Docker engine is reachable (test)");
      },
    };
    asked.push({ backend, family, what: "drive" });
    return executor;
  };
}

function linkcheckSpec(family?: ImageFamily): TaskSpec {
  const spec = TaskSpec.parse(JSON.parse(fs.readFileSync(path.join(LINKCHECK, "task.json"), "utf8")));
  return family ? { ...spec, image_family: family } : spec;
}

describe("a run uses its task's image family everywhere", () => {
  let root: string;
  beforeAll(() => {
    root = tempDir("image-family");
  });
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  function workspaceCopy(name: string): string {
    const ws = path.join(root, name);
    fs.cpSync(path.join(LINKCHECK, "repo"), ws, { recursive: true });
    return ws;
  }

  it("a python task's preflight, driver and resumed driver after a restart all ask for the python executor; status shows python", async () => {
    const stateDir = path.join(root, "state-python");
    const asked: Asked[] = [];
    const runs = createRunService({ stateDir, executorFactory: recordingFactory(asked) });
    const created = await runs.createRun({
      workspace: workspaceCopy("ws-python"),
      taskSpec: linkcheckSpec("python"),
      controlDir: path.join(LINKCHECK, "control"),
      replayPath: path.join(LINKCHECK, "replay.json"),
      model: "replay",
      trustReplayFile: true,
      backend: "trusted_local",
    });
    expect(created.image_family).toBe("python");
    const waiting = expectStatus(await runs.settled(created.run_id), "awaiting_approval");
    const created_event = runs
      .traceJsonl(created.run_id)
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; payload: Record<string, unknown> })
      .find((e) => e.type === "run_created");
    expect(created_event?.payload.image_family).toBe("python");
    await runs.shutdown();

    // a new daemon over the same state dir: the family comes from the stored task, not from a default
    const after: Asked[] = [];
    const again = createRunService({ stateDir, executorFactory: recordingFactory(after) });
    await again.recoverAtStartup();
    expect(again.getRun(created.run_id).image_family).toBe("python");
    await again.approve(created.run_id, waiting.pending_action!.action_id);
    await again.settled(created.run_id);
    await again.shutdown();

    expect(asked.filter((a) => a.what === "preflight")).toEqual([{ backend: "trusted_local", family: "python", what: "preflight" }]);
    expect(asked.some((a) => a.what === "drive")).toBe(true);
    expect(new Set(asked.map((a) => a.family))).toEqual(new Set(["python"]));
    expect(after.length).toBeGreaterThan(0);
    expect(new Set(after.map((a) => a.family))).toEqual(new Set(["python"]));
  });

  it("regression: resume did not check the sandbox first, so a run resumed with the engine gone went on and failed later; now it is refused and left as it was", async () => {
    const asked: Asked[] = [];
    let engineGone = false;
    const runs = createRunService({ stateDir: path.join(root, "state-resume"), executorFactory: recordingFactory(asked, () => engineGone) });
    const created = await runs.createRun({
      workspace: workspaceCopy("ws-resume"),
      taskSpec: linkcheckSpec("go"),
      controlDir: path.join(LINKCHECK, "control"),
      replayPath: path.join(LINKCHECK, "replay.json"),
      model: "replay",
      trustReplayFile: true,
      backend: "trusted_local",
      budgets: { tool_calls: 1 },
    });
    expectStatus(await runs.settled(created.run_id), "budget_exhausted");
    const before = runs.traceJsonl(created.run_id);
    engineGone = true;
    let code: string | null = null;
    try {
      await runs.resume(created.run_id, { tool_calls: 40 });
    } catch (err) {
      code = isMiniAgentError(err) ? err.code : "other";
    }
    expect(code).toBe("runtime_unavailable");
    expect(runs.getRun(created.run_id).status).toBe("budget_exhausted");
    expect(runs.traceJsonl(created.run_id)).toBe(before);
    expect(asked.filter((a) => a.what === "preflight").map((a) => a.family)).toEqual(["go", "go"]);
    await runs.shutdown();
  });

  it("a task that names no family runs in node", async () => {
    const asked: Asked[] = [];
    const runs = createRunService({ stateDir: path.join(root, "state-node"), executorFactory: recordingFactory(asked) });
    const created = await runs.createRun({
      workspace: workspaceCopy("ws-node"),
      taskSpec: linkcheckSpec(),
      controlDir: path.join(LINKCHECK, "control"),
      replayPath: path.join(LINKCHECK, "replay.json"),
      model: "replay",
      trustReplayFile: true,
      backend: "trusted_local",
    });
    expect(created.image_family).toBe("node");
    await runs.settled(created.run_id);
    await runs.shutdown();
    expect(new Set(asked.map((a) => a.family))).toEqual(new Set(["node"]));
  });

  it("a live go run asks the model factory (and so the live gate) for the go family; a refusal there leaves no workspace", async () => {
    const asked: Asked[] = [];
    const requests: LiveModelRequest[] = [];
    const runs = createRunService({
      stateDir: path.join(root, "state-live"),
      executorFactory: recordingFactory(asked),
      modelFactory: (req) => {
        requests.push(req);
        throw new MiniAgentError("isolation_unverified", "no passing go report (test)");
      },
    });
    const workspace = path.join(root, "ws-live");
    let code: string | null = null;
    try {
      await runs.createRun({
        workspace,
        fixtureDir: LINKCHECK, // its task names no family
        model: "live",
        trustReplayFile: false,
        backend: "container",
      });
    } catch (err) {
      code = isMiniAgentError(err) ? err.code : "other";
    }
    expect(code).toBe("isolation_unverified");
    expect(requests.map((r) => r.imageFamily)).toEqual(["node"]);

    fs.mkdirSync(workspace);
    try {
      await runs.createRun({
        workspace,
        taskSpec: linkcheckSpec("go"),
        controlDir: path.join(LINKCHECK, "control"),
        model: "live",
        trustReplayFile: false,
        backend: "container",
      });
    } catch (err) {
      code = isMiniAgentError(err) ? err.code : "other";
    }
    expect(code).toBe("isolation_unverified");
    expect(requests.map((r) => r.imageFamily)).toEqual(["node", "go"]);
    expect(asked.filter((a) => a.what === "preflight").map((a) => `${a.backend}/${a.family}`)).toEqual(["container/node", "container/go"]);
    expect(fs.readdirSync(workspace)).toEqual([]);
    expect(runs.listRuns()).toEqual([]);
    await runs.shutdown();
  });
});
