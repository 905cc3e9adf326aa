import fs from "node:fs";
import path from "node:path";
import { Writable } from "node:stream";
import Database from "better-sqlite3";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OrchestratorName } from "../../daemon/src/contracts/run.js";
import type { DockerExecutor } from "../../daemon/src/sandbox/docker-executor.js";
import { MiniAgentError } from "../../daemon/src/errors.js";
import type { Model } from "../../daemon/src/models/model.js";
import type { RunServiceImpl, RunServiceOptions } from "../../daemon/src/runtime/service-impl.js";
import type { RunView, TraceEvent } from "../../daemon/src/runtime/service.js";
import { containerExecutor, leftovers, LINKCHECK, service, tempDir } from "../runtime/harness.js";

/**
 * The Agents SDK takes the turns; everything else is the host's. The same
 * replay through the manual loop and through the SDK must end the same way,
 * with the same trace, writes, approvals and observations, on the real
 * container backend and a real SQLite ledger.
 */
process.env.TESTCONTAINERS_RYUK_DISABLED = "true";
const SDK_VERSION = (JSON.parse(fs.readFileSync(path.join(LINKCHECK, "../../node_modules/@openai/agents/package.json"), "utf8")) as { version: string })
  .version;

interface Outcome {
  view: RunView;
  approvals: number;
  events: TraceEvent[];
  /** what the model was told, as the ledger holds it */
  observations: unknown[];
  log: string[];
}

describe("agents-sdk orchestrator against the manual loop (same replay, same host services)", () => {
  let root: string;
  let executor: DockerExecutor;
  const runIds: string[] = [];
  const services: RunServiceImpl[] = [];
  let n = 0;

  beforeAll(async () => {
    root = tempDir("agents-sdk");
    executor = await containerExecutor(path.join(root, "image"));
  });
  afterAll(async () => {
    for (const s of services) await s.shutdown();
    expect(await leftovers(runIds)).toEqual([]);
    fs.rmSync(root, { recursive: true, force: true });
  });

  async function drive(
    orchestrator: OrchestratorName,
    opts: {
      replay?: string;
      budgets?: Record<string, number>;
      model?: (runs: () => RunServiceImpl) => RunServiceOptions["modelFactory"];
      during?: (svc: RunServiceImpl, runId: string) => Promise<void>;
    } = {},
  ): Promise<Outcome> {
    const stateDir = path.join(root, `state-${++n}`);
    const log: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        log.push(...chunk.toString().split("\n").filter(Boolean));
        cb();
      },
    });
    let svc!: RunServiceImpl;
    svc = service(stateDir, executor, { logger: pino({ level: "info" }, sink), ...(opts.model && { modelFactory: opts.model(() => svc) }) });
    services.push(svc);
    const created = await svc.createRun({
      workspace: path.join(root, `ws-${n}`),
      fixtureDir: LINKCHECK,
      model: opts.model ? "live" : "replay",
      replayPath: opts.replay ? path.join(LINKCHECK, opts.replay) : undefined,
      trustReplayFile: false,
      backend: "container",
      orchestrator,
      ...(opts.budgets && { budgets: opts.budgets }),
    });
    runIds.push(created.run_id);
    await opts.during?.(svc, created.run_id);
    let view = await svc.settled(created.run_id);
    let approvals = 0;
    while (view.status === "awaiting_approval" && view.pending_action && approvals < 5) {
      await svc.approve(created.run_id, view.pending_action.action_id);
      approvals++;
      view = await svc.settled(created.run_id);
    }
    const events = await svc.events(created.run_id, 0, 0);
    const db = new Database(path.join(stateDir, "ledger.sqlite"), { readonly: true });
    const observations = (
      db.prepare("SELECT record FROM messages WHERE run_id = ? AND role = 'tool' ORDER BY idx").all(created.run_id) as Array<{ record: string }>
    ).map((r) => JSON.parse(r.record) as unknown);
    db.close();
    return { view, approvals, events, observations, log };
  }

  const count = (events: TraceEvent[], type: TraceEvent["type"]) => events.filter((e) => e.type === type).length;
  /** what must not differ between orchestrators: the order of what happened, the observed results, the end */
  const shape = (o: Outcome) => ({
    status: o.view.status,
    reason: o.view.reason,
    approvals: o.approvals,
    types: o.events.map((e) => e.type),
    observed: o.events.filter((e) => e.type === "tool_observed").map((e) => [e.call_id, e.payload.tool, e.payload.ok, e.payload.error]),
    // action ids are derived from the run id, so only their places are compared
    observations: JSON.parse(JSON.stringify(o.observations).replace(/act_[0-9a-f]+/g, "act_*")) as unknown,
  });

  it("fixtures/linkcheck: completed, writes=2, 2 receipts, candidate tests 3/3, 2 approvals, run_created names @openai/agents; the same as the manual loop", async () => {
    const [manual, sdk] = await Promise.all([drive("manual"), drive("agents-sdk")]);
    expect({ status: sdk.view.status, reason: sdk.view.reason }).toEqual({ status: "completed", reason: "verified by the host" });
    expect(count(sdk.events, "action_written")).toBe(2);
    expect(count(sdk.events, "action_receipt")).toBe(2);
    expect(sdk.approvals).toBe(2);
    expect(sdk.view.tests).toMatchObject({ discovered: 3, passed: 3, failed: 0 });
    const createdEvent = sdk.events.find((e) => e.type === "run_created")!;
    expect(createdEvent.payload.orchestrator).toEqual({ name: "agents-sdk", package: "@openai/agents", version: SDK_VERSION });
    expect(SDK_VERSION).toMatch(/^0\.20\./);
    // the SDK really took the turns: it paused twice and resumed its own RunState twice
    expect(sdk.log.filter((l) => l.includes("Runner paused for approval"))).toHaveLength(2);
    expect(sdk.log.filter((l) => l.includes('"resumed":"saved_run_state"'))).toHaveLength(2);
    expect(shape(sdk)).toEqual(shape(manual));
    expect(sdk.view.counters).toMatchObject({ ...manual.view.counters, elapsed_ms: sdk.view.counters.elapsed_ms });
  });

  it.each(["replays/unknown-tool.json", "replays/invalid-fields.json"])(
    "%s: the host, not the SDK, answers the bad call, with the same observation as the manual loop",
    async (replay) => {
      const [manual, sdk] = await Promise.all([drive("manual", { replay }), drive("agents-sdk", { replay })]);
      const code = replay.includes("unknown") ? "unknown_tool" : "invalid_fields";
      expect(sdk.observations).toHaveLength(1);
      expect(sdk.observations[0]).toMatchObject({ role: "tool", result: { ok: false, error: { code } } });
      expect(shape(sdk)).toEqual(shape(manual));
    },
  );

  it("final-without-work: the Runner finishes normally with a final_output, and the host Verifier fails the run as the manual loop does (final_output is not completion)", async () => {
    const [manual, sdk] = await Promise.all([
      drive("manual", { replay: "replays/final-without-work.json" }),
      drive("agents-sdk", { replay: "replays/final-without-work.json" }),
    ]);
    expect(sdk.log.filter((l) => l.includes('"runner":"finished"'))).toHaveLength(1);
    expect(sdk.view.status).toBe("failed");
    expect(sdk.view.reason).toBe(manual.view.reason);
    expect(count(sdk.events, "verification_started")).toBe(1);
    expect(count(sdk.events, "action_written")).toBe(0);
    expect(shape(sdk)).toEqual(shape(manual));
  });

  it("a model_turns budget stops the run budget_exhausted through the shared steps, as in the manual loop (not MaxTurnsExceeded, not a crash)", async () => {
    const [manual, sdk] = await Promise.all([drive("manual", { budgets: { model_turns: 3 } }), drive("agents-sdk", { budgets: { model_turns: 3 } })]);
    expect({ status: sdk.view.status, reason: sdk.view.reason }).toEqual({ status: "budget_exhausted", reason: "budget_exhausted:model_turns" });
    expect(shape(sdk)).toEqual(shape(manual));
  });

  it("a cancel while the Runner waits in our Model ends the run cancelled with one run_stopped, as in the manual loop", async () => {
    const hanging = (): RunServiceOptions["modelFactory"] => {
      const model: Model = {
        name: "hanging",
        decide: (_view, signal) =>
          new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject(new MiniAgentError("cancelled", "aborted")), { once: true })),
      };
      return () => model;
    };
    const cancelWhenAsked = async (svc: RunServiceImpl, runId: string) => {
      while (!(await svc.events(runId, 0, 0)).some((e) => e.type === "model_requested")) await new Promise((r) => setTimeout(r, 50));
      await svc.cancel(runId);
    };
    const [manual, sdk] = await Promise.all([
      drive("manual", { model: hanging, during: cancelWhenAsked }),
      drive("agents-sdk", { model: hanging, during: cancelWhenAsked }),
    ]);
    expect({ status: sdk.view.status, reason: sdk.view.reason }).toEqual({ status: "cancelled", reason: "cancelled" });
    expect(count(sdk.events, "run_stopped")).toBe(1);
    expect(shape(sdk)).toEqual(shape(manual));
  });

  it("a model failure is the host's to retry: a non-transient one fails the run after one request, never re-asked by the SDK", async () => {
    const failing = (): RunServiceOptions["modelFactory"] => () => ({
      name: "failing",
      decide: async () => {
        throw new MiniAgentError("model_error", "provider returned 400", { details: { transient: false } });
      },
    });
    const [manual, sdk] = await Promise.all([drive("manual", { model: failing }), drive("agents-sdk", { model: failing })]);
    expect(sdk.view.status).toBe("failed");
    expect(sdk.view.reason).toBe(manual.view.reason);
    expect(count(sdk.events, "model_requested")).toBe(1);
    expect(shape(sdk)).toEqual(shape(manual));
  });
});
