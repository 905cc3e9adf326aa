import { termSafe, EXIT } from "../../../client-lib/index.js";
import { Job, Queue } from "bullmq";
import type { CaseResult, WorkerIdentity } from "../../../daemon/src/contracts/eval-report.js";
import { AttemptLog, FleetJob, FleetResult } from "../../../daemon/src/contracts/fleet.js";
import { taskImageFamily } from "../../../daemon/src/contracts/task-spec.js";
import type { ImageFamily } from "../../../daemon/src/contracts/test-report.js";
import { MiniAgentError } from "../../../daemon/src/errors.js";
import { type LoadedCase, loadSuite } from "../case-load.js";
import type { EvalIO } from "../command.js";
import { finishReport, reportSummary } from "../report-write.js";
import { copyLimitsOf, type RunOptions } from "../run-args.js";
import { errorResult } from "../run-case.js";
import { createProgress } from "../run-progress.js";
import { caseFile, dropCaseResult, type EvalSettings, openOutput, planCase, writeAtomic, writeCaseResult } from "../run-state.js";
import { packCase } from "./case-payload.js";
import { cancelSuite, dropCancelledRun, isCancelled } from "./fleet-cancel.js";
import { openSuiteRun, readSuiteRun } from "./fleet-state.js";
import { CANCEL_KEY_TTL_S, jobIdOf, queueFor } from "./queue-names.js";
import { resolveQueueTarget } from "./queue-password.js";
import { connectionOptions } from "./queue-url.js";
import { closeAll, redisOf } from "./redis-like.js";
import { pingQueue } from "./queue-ping.js";

/** How often the runner looks at its jobs; each look is one state check (a short script) per unfinished case. */
export const FLEET_POLL_MS = 500;
/** The progress display's rows: the cases running now, at most this many shown. */
const MAX_ROWS = 16;

export interface FleetRunDeps {
  /** registers the Ctrl-C handler; returns an unregister function */
  onInterrupt(handler: () => void): () => void;
}

interface Pending {
  c: LoadedCase;
  family: ImageFamily;
  jobId: string;
  data: FleetJob;
  row: number | null;
  /** what the case's progress row says now */
  label?: string;
}

/**
 * `eval run SUITE... --queue URL --output DIR`: one BullMQ job per case,
 * taken by mini-agent-worker processes; this process only enqueues, watches
 * and writes the same output folder, progress display and report as a local
 * run (run-state.ts, run-progress.ts, report-write.ts). Resumable the same
 * way: done cases are skipped, and an unfinished case's job is found again by
 * its id (fleet.json) instead of being added twice.
 */
export async function runFleetSuite(opts: RunOptions & { queue: string }, io: EvalIO, deps: FleetRunDeps): Promise<number> {
  const target = resolveQueueTarget(opts.queue, opts.queuePasswordFile);
  const { cases } = await loadSuite(opts.suiteDirs, copyLimitsOf(opts));
  const runtime = opts.runtime ?? "runc";
  // a worker refuses a job whose case id is not a plain folder name: refused here, before anything is queued
  for (const c of cases)
    if (!FleetJob.shape.case_id.safeParse(c.id).success)
      throw new MiniAgentError(
        "case_invalid",
        `${termSafe(c.dir)}: a case queued for a fleet needs a folder name of [A-Za-z0-9_.:-] (1-128 characters); nothing was queued`,
        {
          details: { file: c.dir },
        },
      );
  // every case packed before anything is written or enqueued: an oversized case changes nothing
  const payloads = new Map<string, Awaited<ReturnType<typeof packCase>>>();
  for (const c of cases) payloads.set(c.id, await packCase(c.dir));

  const connection = connectionOptions(target);
  const queues = new Map<ImageFamily, Queue>();
  const queueOf = (f: ImageFamily) => {
    let q = queues.get(f);
    if (q === undefined) {
      q = new Queue(queueFor(runtime, f, opts.model), { connection });
      // ioredis reconnects by itself (a Redis restart); the error events are that, not a failure of the run
      q.on("error", () => undefined);
      queues.set(f, q);
    }
    return q;
  };
  try {
    await pingQueue(redisOf(queueOf("node")), target.display, undefined, queueOf("node"));
    const settings: EvalSettings = { schema_version: 1, model: opts.model, runtime, policy_profile: opts.profile };
    openOutput(opts.output, settings, opts.rerun);
    const redis = await redisOf(queueOf("node"));
    // resumed after `eval cancel` or Ctrl-C: the cases without a result run again, under a new id (the old one's cancel key
    // would stop them); what the cancelled run left in Redis (cases that ended after the cancel) is dropped first
    const before = opts.rerun ? null : readSuiteRun(opts.output);
    const resumedAfterCancel = before !== null && (await isCancelled(redis, before));
    if (resumedAfterCancel) await dropCancelledRun([...new Set(cases.map((c) => queueOf(taskImageFamily(c.task))))], before);
    const suiteRun = openSuiteRun(
      opts.output,
      opts.rerun,
      target.display,
      resumedAfterCancel,
      cases.map((c) => taskImageFamily(c.task)),
    );

    const results = new Map<string, CaseResult>();
    const pending: Pending[] = [];
    for (const c of cases) {
      const plan = planCase(opts.output, c.id, c.hash, opts.rerun);
      if (plan.kind === "skip") {
        results.set(c.id, plan.result);
        continue;
      }
      dropCaseResult(opts.output, c.id);
      const p = payloads.get(c.id)!;
      const family = taskImageFamily(c.task);
      const data: FleetJob = {
        schema_version: 1,
        suite_run: suiteRun,
        case_id: c.id,
        case_hash: c.hash,
        family,
        model: opts.model,
        profile: opts.profile,
        tar_base64: p.tar.toString("base64"),
        tar_sha256: p.sha256,
      };
      pending.push({ c, family, jobId: jobIdOf(suiteRun, c.id, c.hash), data, row: null });
    }
    const add = (p: Pending) => queueOf(p.family).add("case", p.data, { jobId: p.jobId, attempts: 1, removeOnComplete: false, removeOnFail: false });
    // a job with this id already there (a resumed run) is left as it is: BullMQ adds nothing for a known id
    for (const p of pending) await add(p);

    const startedAt = Date.now();
    const progress = createProgress(io, {
      json: opts.json,
      total: cases.length,
      skipped: results.size,
      workers: Math.max(1, Math.min(MAX_ROWS, pending.length)),
    });
    const rows: Array<string | null> = Array.from({ length: Math.max(1, Math.min(MAX_ROWS, pending.length)) }, () => null);
    // who cancelled: Ctrl-C here, or `eval cancel` from another process (seen through the cancel key)
    // typed wide on purpose: the Ctrl-C handler sets it behind the compiler's back
    let cancelled = null as null | "interrupt" | "eval cancel";
    const off = deps.onInterrupt(() => {
      cancelled = "interrupt";
    });
    try {
      while (pending.length > 0 && cancelled === null) {
        if (await isCancelled(redis, suiteRun)) {
          cancelled = "eval cancel";
          break;
        }
        for (const p of [...pending]) {
          const done = await look(p);
          if (done === null) continue;
          // a case its worker stopped because of a cancel is no result: resumed, it runs again
          if (done.status === "cancelled" && (await isCancelled(redis, suiteRun))) {
            cancelled = "eval cancel";
            break;
          }
          writeCaseResult(opts.output, done);
          results.set(p.c.id, done);
          if (p.row !== null) rows[p.row] = null;
          progress.finished(p.row ?? 0, done);
          pending.splice(pending.indexOf(p), 1);
          await queueOf(p.family)
            .remove(p.jobId)
            .catch(() => undefined);
        }
        if (pending.length > 0 && cancelled === null) await new Promise((r) => setTimeout(r, FLEET_POLL_MS));
      }
    } finally {
      off();
      progress.close();
    }

    if (cancelled !== null) {
      // after `eval cancel` too: a job this runner added again in the meantime is removed as well
      const n = await cancelSuite(redis, [...queues.values()], suiteRun, CANCEL_KEY_TTL_S);
      const by = cancelled === "interrupt" ? "cancelled" : "cancelled by `eval cancel`";
      if (opts.json) io.out(`${JSON.stringify({ kind: "cancelled", done: results.size, total: cases.length, by: cancelled })}\n`);
      io.err(
        `${termSafe(`mini-agent-client eval run: ${by}; ${n.removed} queued cases removed, ${n.running} running ones told to stop; ${results.size}/${cases.length} cases done (results in ${opts.output}/cases), no report written. Running the same command again resumes: the cases without a result run again.`)}\n`,
      );
      return EXIT.cancelled;
    }

    const workerIds = new Set([...results.values()].flatMap((r) => (r.workers ?? []).map((w) => `${w.hostname}/${w.worker_id}`)));
    const report = await finishReport({
      output: opts.output,
      cases: cases.map((c) => results.get(c.id)!),
      settings: { model: opts.model, runtime, policy_profile: opts.profile, concurrency: Math.max(1, workerIds.size) },
      startedAt,
      finishedAt: Date.now(),
    });
    return reportSummary(io, opts.json, opts.output, report, `on ${workerIds.size} worker(s)`) === 0 ? EXIT.ok : EXIT.failed;

    /** null while the case is queued or running; its result once the job ended. */
    async function look(p: Pending): Promise<CaseResult | null> {
      const q = queueOf(p.family);
      // the state alone while the case is queued or running: the job hash (with the case's tar) is read once, at the end
      const state = await q.getJobState(p.jobId);
      if (state === "unknown") {
        // gone: removed by `eval cancel` (the loop stops at its next look at the key), or lost by Redis (a restart without
        // persistence): this runner holds the payload, so it adds it again
        if (await isCancelled(redis, suiteRun)) return null;
        await add(p);
        return null;
      }
      // a live case no worker takes (none has a passing report for its family) says so in its row instead of waiting silently
      const label =
        state === "active"
          ? p.c.id
          : state === "waiting" && opts.model === "live"
            ? `${p.c.id} queued: waiting for a worker whose ${p.family} isolation report is fresh and passing`
            : null;
      if (label !== null && label !== p.label) {
        const free = p.row ?? rows.indexOf(null);
        if (free >= 0) {
          rows[free] = p.c.id;
          p.row = free;
          p.label = label;
          progress.started(free, label);
        }
      }
      if (state !== "completed" && state !== "failed") return null;
      const job = await Job.fromId<FleetJob, unknown>(q, p.jobId);
      if (job === undefined) return null;
      const workers = await attemptsOf(q, p.jobId);
      const attempts = Math.max(1, job.attemptsStarted, workers.length);
      if (state === "failed") {
        const wall = job.finishedOn && job.processedOn ? job.finishedOn - job.processedOn : 0;
        return { ...errorResult(p.c, attempts, wall, `the fleet gave up on the case: ${job.failedReason ?? "no reason given"}`), workers };
      }
      const parsed = FleetResult.safeParse(job.returnvalue);
      if (!parsed.success || parsed.data.result.id !== p.c.id || parsed.data.result.hash !== p.c.hash)
        return { ...errorResult(p.c, attempts, 0, "the worker's result does not fit the contract or names another case"), workers };
      const r = parsed.data;
      if (r.result.trace_file !== null) writeAtomic(caseFile(opts.output, "traces", `${p.c.id}.jsonl`), r.trace);
      if (r.result.diff_file !== null) writeAtomic(caseFile(opts.output, "diffs", `${p.c.id}.diff`), r.diff);
      return {
        ...r.result,
        trace_file: r.result.trace_file === null ? null : `traces/${p.c.id}.jsonl`,
        diff_file: r.result.diff_file === null ? null : `diffs/${p.c.id}.diff`,
        attempts,
        workers: workers.length > 0 ? workers : [r.worker],
      };
    }
  } finally {
    await closeAll([...queues.values()]);
  }
}

/** Every worker that started the job, in order, from the job's log lines (run-job.ts writes one per attempt). */
async function attemptsOf(q: Queue, jobId: string): Promise<WorkerIdentity[]> {
  const { logs } = await q.getJobLogs(jobId, 0, 100, true);
  const out: Array<{ attempt: number; worker: WorkerIdentity }> = [];
  for (const line of logs) {
    try {
      const parsed = AttemptLog.safeParse(JSON.parse(line));
      if (parsed.success) out.push(parsed.data);
    } catch {
      // a log line that is not ours is not a worker
    }
  }
  return out.sort((a, b) => a.attempt - b.attempt).map((a) => a.worker);
}

export function assertQueueOptions(opts: RunOptions): void {
  if (opts.socket !== undefined || opts.stateDir !== undefined)
    throw new MiniAgentError(
      "invalid_request",
      "--queue runs the cases on the fleet's workers: --socket and --state-dir name a local daemon and do not fit with it",
    );
}
