import fs from "node:fs/promises";
import path from "node:path";
import { pino } from "pino";
import { computeManifest } from "../../daemon/src/workspace/manifest.js";
import { sha256Hex } from "../../daemon/src/workspace/hash.js";
import type { OrchestratorName } from "../../daemon/src/contracts/run.js";
import type { ImageFamily } from "../../daemon/src/contracts/test-report.js";
import { MiniAgentError } from "../../daemon/src/errors.js";
import type { Executor } from "../../daemon/src/sandbox/executor.js";
import { LocalExecutor } from "../../daemon/src/sandbox/local-executor.js";
import { createRunService, type RunServiceImpl, type RunServiceOptions } from "../../daemon/src/runtime/service-impl.js";
import type { RunView, TraceEvent } from "../../daemon/src/runtime/service.js";
import type { ExperimentContext } from "./types.js";

/**
 * Drives the REAL RunService (ledger, tools, policy, verifier, container
 * sandbox) the way the daemon does, with the operator's approvals given by the
 * script. Only what a scenario measures comes out: statuses, counts, codes and
 * relative paths, never run ids or host paths.
 */
export const FIXTURE = "fixtures/linkcheck";

export function fixtureDir(ctx: ExperimentContext): string {
  return path.join(ctx.repoRoot, FIXTURE);
}

export function startService(
  ctx: ExperimentContext,
  extra: Partial<RunServiceOptions> = {},
  stateName = "state",
  /** executors of other image families, made before the service (ctx.familyExecutor) */
  families: Partial<Record<ImageFamily, Executor>> = {},
): RunServiceImpl {
  // host processes only for a scenario the runner moved there (no engine, no isolation claimed); their copies live in its scratch
  const local = ctx.backend === "trusted_local" ? new LocalExecutor({ tmpRoot: ctx.scratch }) : null;
  const executor = ctx.executor;
  if (executor === null && local === null) throw new MiniAgentError("runtime_unavailable", "no sandbox engine is reachable");
  return createRunService({
    stateDir: path.join(ctx.scratch, stateName),
    executorFactory: (backend, family) => {
      if (backend !== ctx.backend) throw new MiniAgentError("backend_not_isolated", `this scenario runs on the ${ctx.backend} backend only`);
      if (local !== null) {
        if (family !== "node") throw new MiniAgentError("image_missing", `the report runs only node fixtures on trusted_local, not ${family}`);
        return local;
      }
      if (executor === null) throw new MiniAgentError("runtime_unavailable", "no sandbox engine is reachable");
      if (family === "node") return executor;
      const other = families[family];
      if (!other) throw new MiniAgentError("image_missing", `the report has no ${family} executor for this scenario`);
      return other;
    },
    logger: pino({ level: "silent" }),
    builtinFixturesDir: path.join(ctx.repoRoot, "fixtures"),
    ...extra,
  });
}

/** `fn` with a fresh service on the context's state dir; the service is shut down however `fn` ends. */
export async function withService<T>(
  ctx: ExperimentContext,
  fn: (svc: RunServiceImpl) => Promise<T>,
  families: Partial<Record<ImageFamily, Executor>> = {},
): Promise<T> {
  const svc = startService(ctx, {}, "state", families);
  try {
    return await fn(svc);
  } finally {
    await svc.shutdown();
  }
}

export interface ReplayRunOptions {
  /** the fixture, relative to the repo (default fixtures/linkcheck) */
  fixture?: string;
  /** a replay under the fixture (default: its canonical replay.json) */
  replay?: string;
  workspaceName?: string;
  /** approve every write the run proposes (the operator's decision, one action at a time) */
  approve?: boolean;
  maxApprovals?: number;
  /** who takes the run's turns (default: the service's default, manual) */
  orchestrator?: OrchestratorName;
}

export interface ReplayRunOutcome {
  runId: string;
  workspace: string;
  view: RunView;
  approvals: number;
  events: TraceEvent[];
}

export async function runReplay(svc: RunServiceImpl, ctx: ExperimentContext, opts: ReplayRunOptions = {}): Promise<ReplayRunOutcome> {
  const workspace = path.join(ctx.scratch, opts.workspaceName ?? "ws");
  const fixture = opts.fixture ? path.join(ctx.repoRoot, opts.fixture) : fixtureDir(ctx);
  const created = await svc.createRun({
    workspace,
    fixtureDir: fixture,
    model: "replay",
    replayPath: opts.replay ? path.join(fixture, opts.replay) : undefined,
    // on trusted_local only the report's own replays, shipped beside the fixture, are run; the report states that it trusts them
    trustReplayFile: ctx.backend === "trusted_local",
    backend: ctx.backend,
    ...(opts.orchestrator !== undefined && { orchestrator: opts.orchestrator }),
  });
  const runId = created.run_id;
  let view = await svc.settled(runId);
  let approvals = 0;
  while (opts.approve !== false && view.status === "awaiting_approval" && view.pending_action && approvals < (opts.maxApprovals ?? 10)) {
    await svc.approve(runId, view.pending_action.action_id);
    approvals++;
    view = await svc.settled(runId);
  }
  const events = await svc.events(runId, 0, 0);
  return { runId, workspace, view, approvals, events };
}

export function countEvents(events: TraceEvent[], type: TraceEvent["type"]): number {
  return events.filter((e) => e.type === type).length;
}

/** The payload of the tool_observed event for one call (what the model was told, as the trace recorded it). */
export function observedFor(events: TraceEvent[], callId: string): Record<string, unknown> | null {
  return events.find((e) => e.type === "tool_observed" && e.call_id === callId)?.payload ?? null;
}

/** Paths named by a unified diff's `+++ b/...` / `--- a/...` headers, sorted and unique. */
export function diffPaths(diff: string): string[] {
  const out = new Set<string>();
  for (const line of diff.split("\n")) {
    const m = /^(?:\+\+\+ b\/|--- a\/)(.+)$/.exec(line);
    if (m) out.add(m[1]!);
  }
  return [...out].sort();
}

export async function manifestDigest(dir: string): Promise<string> {
  return (await computeManifest(dir)).digest;
}

/** The digest of the fixture as shipped: what an untouched workspace must still equal. */
export async function fixtureRepoDigest(ctx: ExperimentContext): Promise<string> {
  return manifestDigest(path.join(fixtureDir(ctx), "repo"));
}

export async function fileHash(file: string): Promise<string | null> {
  try {
    return sha256Hex(await fs.readFile(file));
  } catch {
    return null;
  }
}
