import { ApiClient, EXIT, resolveTarget, quoteArgv, termSafe } from "../../client-lib/index.js";
import { usageFail } from "./usage.js";
import type { CaseResult } from "../../daemon/src/contracts/eval-report.js";
import { TERMINAL_STATUSES } from "../../daemon/src/contracts/run.js";
import { isMiniAgentError, MiniAgentError } from "../../daemon/src/errors.js";
import { type LoadedCase, loadSuite } from "./case-load.js";
import { longestFirst } from "./case-order.js";
import type { EvalCommand, EvalIO } from "./command.js";
import { finishReport, reportSummary } from "./report-write.js";
import { copyLimitsOf, parseRunArgs, RUN_USAGE, type RunOptions } from "./run-args.js";
import { CaseInterrupted, type CaseRunContext, errorResult, runCase } from "./run-case.js";
import { createProgress } from "./run-progress.js";
import { dropCaseResult, type EvalSettings, openOutput, planCase, writeCaseResult } from "./run-state.js";

/**
 * `mini-agent-client eval run SUITE_DIR... --output DIR`: every case in its
 * own fresh workspace through the daemon, N at a time, unattended; resumable
 * from the output folder (run-state.ts). Exit 0 when every case passed, 1
 * otherwise, 2 when the daemon went away (the same command resumes), 64 on
 * usage errors.
 */
export const runCommand: EvalCommand = {
  async main(argv, io) {
    const parsed = parseRunArgs(argv, io.cwd);
    if (!parsed.ok) {
      if (parsed.help) {
        io.out(`${RUN_USAGE}\n`);
        return EXIT.ok;
      }
      return usageFail(io, "eval run", parsed.message);
    }
    const opts = parsed.opts;
    if (opts.queue !== undefined) {
      // the fleet's code (BullMQ, ioredis) is loaded only for a run on a queue
      const fleet = await import("./fleet/fleet-run.js");
      fleet.assertQueueOptions(opts);
      return fleet.runFleetSuite({ ...opts, queue: opts.queue }, io, { onInterrupt: io.onInterrupt ?? onSigint });
    }
    return runSuite(opts, argv, io);
  },
};

/** Ctrl-C, when the IO names no interrupt of its own (the client's process). */
function onSigint(handler: () => void): () => void {
  process.on("SIGINT", handler);
  return () => process.off("SIGINT", handler);
}

async function runSuite(opts: RunOptions, argv: string[], io: EvalIO): Promise<number> {
  const { cases } = await loadSuite(opts.suiteDirs, copyLimitsOf(opts));
  const target = resolveTarget({ socket: opts.socket, "state-dir": opts.stateDir }, io);
  const api = new ApiClient({ socketPath: target.socketPath, stateDir: target.stateDir, explicitSocket: target.explicitSocket });
  const health = await api.health();
  const daemonRuntime = health.engine.runtime;
  if (daemonRuntime !== "runc" && daemonRuntime !== "runsc")
    throw new MiniAgentError("invalid_request", `the daemon runs an unknown runtime: ${daemonRuntime}`);
  // --runtime is a per-run choice: every case's createRun asks for it (the daemon refuses one the engine lacks)
  const runtime = opts.runtime ?? daemonRuntime;
  const settings: EvalSettings = { schema_version: 1, model: opts.model, runtime, policy_profile: opts.profile };
  openOutput(opts.output, settings, opts.rerun);

  const results = new Map<string, CaseResult>();
  const planned: Array<{ c: LoadedCase; attempt: number }> = [];
  for (const c of cases) {
    const plan = planCase(opts.output, c.id, c.hash, opts.rerun);
    if (plan.kind === "skip") {
      results.set(c.id, plan.result);
      continue;
    }
    if (plan.staleRunId !== null) await cancelIfLive(api, plan.staleRunId);
    dropCaseResult(opts.output, c.id);
    planned.push({ c, attempt: plan.attempt });
  }
  // longest first: a long case started last would run alone while the other workers idle
  const queue = longestFirst(planned);

  // the report's timestamps are wall-clock; case times come from the monotonic clock
  const startedAt = Date.now();
  const workers = Math.min(opts.concurrency, Math.max(1, queue.length));
  const progress = createProgress(io, { json: opts.json, total: cases.length, skipped: results.size, workers });
  const ctx: CaseRunContext = {
    api,
    output: opts.output,
    model: opts.model,
    profile: opts.profile,
    ...(opts.runtime !== undefined && { runtime: opts.runtime }),
    daemonRuntime,
    now: () => io.clock.now(),
    ...(opts.maxWorkspaceBytes !== undefined && { maxWorkspaceBytes: opts.maxWorkspaceBytes }),
    ...(opts.maxWorkspaceFiles !== undefined && { maxWorkspaceFiles: opts.maxWorkspaceFiles }),
  };
  let halted: CaseInterrupted | null = null;
  const work = async (worker: number) => {
    for (let next = queue.shift(); next !== undefined && halted === null; next = queue.shift()) {
      const { c, attempt } = next;
      progress.started(worker, c.id);
      const t0 = io.clock.now();
      let r: CaseResult;
      try {
        r = await runCase(c, attempt, ctx);
      } catch (err) {
        if (err instanceof CaseInterrupted) {
          // no result: the next invocation re-runs it from a fresh workspace
          halted = err;
          return;
        }
        r = errorResult(c, attempt, io.clock.now() - t0, isMiniAgentError(err) ? `${err.code}: ${err.message}` : String((err as Error)?.message ?? err));
      }
      writeCaseResult(opts.output, r);
      results.set(c.id, r);
      progress.finished(worker, r);
    }
  };
  try {
    await Promise.all(Array.from({ length: workers }, (_, i) => work(i)));
  } finally {
    progress.close();
  }

  if (halted !== null) {
    const left = cases.length - results.size;
    const msg = `mini-agent-client eval run: ${(halted as CaseInterrupted).why}; ${results.size}/${cases.length} cases done (results in ${opts.output}/cases), ${left} left.\nResume with the same command once the daemon runs:\n  mini-agent-client eval run ${quoteArgv(argv)}\n`;
    if (opts.json) io.out(`${JSON.stringify({ kind: "halted", done: results.size, total: cases.length, reason: (halted as CaseInterrupted).why })}\n`);
    io.err(termSafe(msg, { lines: true }));
    return EXIT.unavailable;
  }

  const report = await finishReport({
    output: opts.output,
    cases: cases.map((c) => results.get(c.id)!),
    settings: { model: opts.model, runtime, policy_profile: opts.profile, concurrency: opts.concurrency },
    startedAt,
    finishedAt: Date.now(),
  });
  return reportSummary(io, opts.json, opts.output, report) === 0 ? EXIT.ok : EXIT.failed;
}

/** A case interrupted in an earlier invocation: its run may still be live in the daemon; stop it before re-running the case. */
async function cancelIfLive(api: ApiClient, runId: string): Promise<void> {
  try {
    const view = (await api.getRun(runId)).run;
    if (!TERMINAL_STATUSES.includes(view.status)) await api.cancel(runId);
  } catch (err) {
    // a run the daemon no longer knows (another state dir, a fresh ledger) needs no cancel
    if (isMiniAgentError(err) && err.code === "daemon_unreachable") throw err;
  }
}
