import { spawn } from "node:child_process";
import fs from "node:fs/promises";
import path from "node:path";
import { statePath } from "../../daemon/src/config/state-dir.js";
import type { OrchestratorName } from "../../daemon/src/contracts/run.js";
import { isMiniAgentError } from "../../daemon/src/errors.js";
import { miniAgentVersion } from "../../daemon/src/config/version.js";
import { packageVersion } from "../../daemon/src/orchestrators/versions.js";
import type { RunServiceImpl } from "../../daemon/src/runtime/service-impl.js";
import type { TraceEvent } from "../../daemon/src/runtime/service.js";
import { createDockerClient } from "../../daemon/src/sandbox/docker-client.js";
import { reapLeftovers } from "../../daemon/src/sandbox/reaper.js";
import { countEvents, diffPaths, fileHash, runReplay, startService, withService, type ReplayRunOutcome } from "./harness.js";
import type { ExperimentContext, GroupDefinition, Json, Scenario } from "./types.js";

/**
 * Group 5, one set of services under three orchestrators: fixtures/linkcheck's
 * canonical replay through the real RunService on the container backend, with
 * only `orchestrator` changed in createRun. The decisions, tools, policy,
 * approvals, side-effect ledger, sandbox and Verifier are the same code in all
 * three; what this group measures is that a framework taking the turns and the
 * pauses still ends where our own loop ends, and that "done" stays the
 * Verifier's. The approvals are given by the script through RunServiceImpl.approve.
 */
const PACKAGES: Record<OrchestratorName, string> = {
  manual: "mini-agent",
  langgraph: "@langchain/langgraph",
  "agents-sdk": "@openai/agents",
};

/** The installed version: fixed by the installation, so canonical like the environment's dependency versions. */
function installedVersion(name: OrchestratorName): string {
  return name === "manual" ? miniAgentVersion() : packageVersion(PACKAGES[name]);
}

/** Who the trace says took the turns (run_created), and the run's own view of it. */
function orchestratorOf(out: ReplayRunOutcome): Json {
  const created = out.events.find((e) => e.type === "run_created")?.payload.orchestrator as
    | { name?: unknown; package?: unknown; version?: unknown }
    | undefined;
  return {
    name: out.view.orchestrator ?? null,
    package: typeof created?.package === "string" ? created.package : null,
    version: typeof created?.version === "string" ? created.version : null,
  } as Json;
}

function forAction(events: TraceEvent[], type: TraceEvent["type"], actionId: string): number {
  return events.filter((e) => e.type === type && e.action_id === actionId).length;
}

async function closedLoopFacts(svc: RunServiceImpl, out: ReplayRunOutcome) {
  const v = out.view.verification;
  return {
    status: out.view.status,
    writes: countEvents(out.events, "action_written"),
    receipts: countEvents(out.events, "action_receipt"),
    candidate_tests: v ? { discovered: v.tests.discovered, passed: v.tests.passed, failed: v.tests.failed } : null,
    approvals: {
      asked: countEvents(out.events, "approval_requested"),
      given: out.events.filter((e) => e.type === "approval_recorded" && e.payload.decision === "approved").length,
    },
    orchestrator: orchestratorOf(out),
    // the workspace ends the same, whoever took the turns
    diff_paths: diffPaths(await svc.diff(out.runId)),
  };
}

const slug = (name: OrchestratorName) => name.replace("-", "_");

function closedLoop(name: OrchestratorName): Scenario {
  return {
    id: `canonical_replay_${slug(name)}`,
    title: `canonical linkcheck replay driven by the ${name} orchestrator: two approved writes, verified green, completed`,
    expected: {
      status: "completed",
      writes: 2,
      receipts: 2,
      candidate_tests: { discovered: 3, passed: 3, failed: 0 },
      approvals: { asked: 2, given: 2 },
      orchestrator: { name, package: PACKAGES[name], version: installedVersion(name) },
      diff_paths: ["src/linkcheck.js", "tests/test_agent_nested.js"],
    },
    criterion: `all facts equal: createRun with orchestrator=${name}; the run ends completed with 2 action_written and 2 action_receipt events; 2 approval_requested, and 2 approvals recorded as given by the script through RunServiceImpl.approve; the Verifier's fresh-container run found 3 candidate tests, 3 passed; the diff against the baseline names exactly src/linkcheck.js and tests/test_agent_nested.js; run_created names the orchestrator, its package ${PACKAGES[name]} and the installed version`,
    does_not_prove:
      name === "manual"
        ? "that a live model would find this fix; the replay is scripted. This is the reference the framework scenarios are compared with"
        : `that the features of ${PACKAGES[name]} mini-agent does not use are safe (its own tools, handoffs, memory, tracing exporters, providers), that a live model driven by it behaves like the replay, or anything about versions other than the one recorded; only that with the turns and pauses in its hands the same host services produced the same end`,
    async run(ctx) {
      return withService(ctx, async (svc) => closedLoopFacts(svc, await runReplay(svc, ctx, { approve: true, orchestrator: name })));
    },
  };
}

/**
 * Child A starts the run under `orchestrator` and reports the approval pause; it
 * is then SIGKILLed with everything open (checkpointer, SQLite). Returns what
 * the child said, or "killed:awaiting_approval" with the ids when the kill landed.
 */
async function pausedInChildThenKilled(
  ctx: ExperimentContext,
  orchestrator: OrchestratorName,
): Promise<{ outcome: string; runId?: string; actionId?: string }> {
  const stateDir = path.join(ctx.scratch, "state");
  await fs.mkdir(stateDir, { recursive: true });
  if (ctx.imageLockPath) await fs.copyFile(ctx.imageLockPath, statePath(stateDir, "imageLock"));
  const script = path.join(ctx.repoRoot, "experiments", "src", "crash-child.ts");
  const args = ["--import", "tsx", script, stateDir, path.join(ctx.repoRoot, "fixtures"), "create", path.join(ctx.scratch, "ws"), orchestrator];
  const child = spawn(ctx.nodeExecPath, args, { cwd: ctx.repoRoot, env: { ...ctx.dockerEnv }, stdio: ["ignore", "pipe", "ignore"] });
  return new Promise((resolve) => {
    let buf = "";
    let paused: { runId: string; actionId: string } | null = null;
    let last = "no_outcome";
    const limit = setTimeout(() => child.kill("SIGKILL"), 600_000);
    child.stdout.on("data", (chunk: Buffer) => {
      buf += chunk.toString("utf8");
      let nl: number;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        try {
          const msg = JSON.parse(line) as { outcome?: unknown; run_id?: unknown; action_id?: unknown };
          last = String(msg.outcome ?? "no_outcome");
          if (msg.outcome === "awaiting_approval" && typeof msg.run_id === "string" && typeof msg.action_id === "string") {
            paused = { runId: msg.run_id, actionId: msg.action_id };
            child.kill("SIGKILL");
          }
        } catch {
          // not a line of ours
        }
      }
    });
    child.on("error", () => {
      clearTimeout(limit);
      resolve({ outcome: "child_failed" });
    });
    child.on("close", (_code, signal) => {
      clearTimeout(limit);
      if (paused && signal === "SIGKILL") resolve({ outcome: "killed:awaiting_approval", ...paused });
      else resolve({ outcome: signal === "SIGKILL" ? "killed:timeout" : last });
    });
  });
}

/** Built for any orchestrator so the kill-and-resume machinery itself is tested under manual too (tests/experiments). */
export function reentryScenario(name: OrchestratorName): Scenario {
  return {
    id: `${slug(name)}_reentry_one_write`,
    title: `${name}: the process is SIGKILLed while the run waits at its first approval (LangGraph: the interrupt); a new process approves and resumes: one write for that action`,
    expected: {
      child: "killed:awaiting_approval",
      status_after_kill: "awaiting_approval",
      intents_for_action: 1,
      writes_for_action: 1,
      receipts_for_action: 1,
      file_matches_after_hash: true,
      writes: 2,
      status: "completed",
    },
    criterion: `child process A creates the run with orchestrator=${name} and is SIGKILLed once the run waits for its first approval (the graph's interrupt saved in its SQLite checkpoint, nothing shut down); a new RunService on the same state dir (what a restarted daemon builds) recovers at startup, approves that action and drives on, approving the second write too. For the first action there is exactly 1 action_intent, 1 action_written and 1 action_receipt, the file has the approved after-hash, and the run completes with 2 writes`,
    does_not_prove:
      "durability across power loss, a kill at other points of the graph (inside the execution node, between write and receipt: the three-state check of group 3 covers the ledger there, not the graph), or that LangGraph features mini-agent does not use re-enter safely",
    async run(ctx) {
      const a = await pausedInChildThenKilled(ctx, name);
      if (!a.runId || !a.actionId) return { child: a.outcome };
      const svc = startService(ctx);
      try {
        await svc.recoverAtStartup();
        const statusAfterKill = svc.getRun(a.runId).status;
        let view = svc.getRun(a.runId);
        let approvals = 0;
        while (view.status === "awaiting_approval" && view.pending_action && approvals < 4) {
          await svc.approve(a.runId, view.pending_action.action_id);
          approvals++;
          view = await svc.settled(a.runId);
        }
        const events = await svc.events(a.runId, 0, 0);
        const row = svc.ledger.findAction(a.runId, a.actionId);
        const workspace = svc.ledger.getRun(a.runId).record.workspace;
        return {
          child: a.outcome,
          status_after_kill: statusAfterKill,
          intents_for_action: forAction(events, "action_intent", a.actionId),
          writes_for_action: forAction(events, "action_written", a.actionId),
          receipts_for_action: forAction(events, "action_receipt", a.actionId),
          file_matches_after_hash: row !== undefined && (await fileHash(path.join(workspace, row.record.path))) === row.record.after_hash,
          writes: countEvents(events, "action_written"),
          status: view.status,
        };
      } catch (err) {
        // the code only: what failed is the observation, the report goes on
        return { child: a.outcome, error: isMiniAgentError(err) ? err.code : "unexpected" };
      } finally {
        await svc.shutdown();
        // whatever the killed process had open in the engine (an adapter may hold a session at its pause) is this run's to remove: nothing else reaps a report's runs
        await reapLeftovers(createDockerClient(ctx.dockerEnv), { runId: a.runId }).catch(() => undefined);
      }
    },
  };
}

export function finalOutputScenario(name: OrchestratorName): Scenario {
  return {
    id: `${slug(name)}_final_output_not_completion`,
    title: `${name}: a scripted model that only says done ends the turns normally (Agents SDK: the Runner's final_output); the Verifier fails the run`,
    expected: {
      orchestrator: name,
      status: "failed",
      writes: 0,
      verification_started: 1,
      verification_passed: 0,
      verification_failed: 1,
      reason_is_verifiers: true,
    },
    criterion: `fixtures/linkcheck/replays/final-without-work.json under orchestrator=${name}: the replay's only decision is a final answer, which the Runner takes as its final_output; the run is then verified by the host (1 verification_started, 1 verification_failed, no verification_passed), nothing was written, and the run's status is failed with exactly the reason the Verifier recorded (a runner that threw would end failed by failRun with no verification at all)`,
    does_not_prove:
      "how the SDK treats final outputs of other shapes (structured output types, handoffs); only that a normal end of the Runner is a request the Verifier may refuse",
    async run(ctx) {
      return withService(ctx, async (svc) => {
        const out = await runReplay(svc, ctx, { replay: "replays/final-without-work.json", approve: false, orchestrator: name });
        const failed = out.events.find((e) => e.type === "verification_failed");
        return {
          orchestrator: out.view.orchestrator ?? null,
          status: out.view.status,
          writes: countEvents(out.events, "action_written"),
          verification_started: countEvents(out.events, "verification_started"),
          verification_passed: countEvents(out.events, "verification_passed"),
          verification_failed: countEvents(out.events, "verification_failed"),
          reason_is_verifiers: failed !== undefined && typeof failed.payload.reason === "string" && out.view.reason === failed.payload.reason,
        };
      });
    },
  };
}

export const group5: GroupDefinition = {
  id: "group-5",
  title: "one set of services under three orchestrators",
  scenarios: [closedLoop("manual"), closedLoop("langgraph"), closedLoop("agents-sdk"), reentryScenario("langgraph"), finalOutputScenario("agents-sdk")],
};
