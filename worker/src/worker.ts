import os from "node:os";
import { Queue, UnrecoverableError, type Job } from "bullmq";
import { ApiClient } from "../../client-lib/index.js";
import { cancelKey, closeAll, connectionOptions, pingQueue, type QueueTarget, queueFor, queueName, redisOf } from "../../eval/src/index.js";
import type { WorkerIdentity } from "../../daemon/src/contracts/eval-report.js";
import type { AttemptLog, FleetResult } from "../../daemon/src/contracts/fleet.js";
import { canonicalJson, sha256Hex } from "../../daemon/src/workspace/hash.js";
import { shellWord } from "../../daemon/src/config/program-command.js";
import { ReadingWorker, UnreadableJobData } from "./job-read.js";
import { createTakeWatch } from "./take-watch.js";
import { JobRefused, runJob } from "./run-job.js";
import { startTakeLoop } from "./take-loop.js";
import type { WorkerOptions } from "./worker-args.js";

/** how long a round that found no job waits before the next one (the queues are polled, not blocked on: one loop serves them all) */
const IDLE_MS = 500;
/** how old a family's verdict may be when a case is fetched (a health read of the worker's own daemon; take-watch.ts) */
const RECHECK_MS = 2000;
/** a result that cannot be written (Redis away) is tried again this often, a second apart, while the case's lock may still hold */
const FINISH_RETRIES = 120;
/** the same queue error is said again only after this long */
const ERROR_REPEAT_MS = 60_000;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * A worker of an eval fleet: one mini-agent daemon (its own state dir,
 * ledger, image lock, credentials and isolation reports) started in this
 * process, and a BullMQ queue pair (replay, live) per family of its runtime; one
 * take loop (take-loop.ts) fetches from them while this process has a free
 * slot and hands each case to that daemon over its own socket, exactly the path a local
 * `eval run` takes. The credentials stay in the daemon part: nothing the
 * worker puts into Redis is read from them.
 */
export interface RunningWorker {
  identity(): Promise<WorkerIdentity>;
  /** stops taking jobs; running ones are left to stall and go to another worker (their runs are stopped with the daemon) */
  close(): Promise<void>;
}

export interface WorkerDeps {
  /** the daemon's socket, once it listens */
  socketPath: string;
  stateDir: string;
  queue: QueueTarget;
  now(): number;
  onError(message: string): void;
  /** a change of what this worker takes (live cases of a family stopped / resumed), with its reason */
  onNotice(message: string): void;
  /** mini-agent-client as the user can run it (config/program-command.ts), for the commands the worker prints */
  clientProgram: string;
}

export async function startWorker(opts: WorkerOptions, deps: WorkerDeps): Promise<RunningWorker> {
  const api = new ApiClient({ socketPath: deps.socketPath, stateDir: deps.stateDir });
  const connection = connectionOptions(deps.queue);
  // one plain queue handle for the cancel key and the start-up ping
  const control = new Queue(queueName(opts.runtime, opts.families[0]!), { connection });
  control.on("error", sayOnce("queue", deps));
  try {
    await pingQueue(redisOf(control), deps.queue.display, undefined, control);
  } catch (err) {
    await closeAll([control]);
    throw err;
  }
  const redis = await redisOf(control);

  const identity = async (): Promise<WorkerIdentity> => {
    const h = await api.health();
    const report = (await api.isolationReport()).report;
    return {
      hostname: os.hostname(),
      worker_id: opts.workerId,
      engine_version: h.engine.version,
      runtime: h.engine.runtime,
      image_digest: h.engine.image_digest,
      isolation_report_sha256: report === null || report === undefined ? null : sha256Hex(canonicalJson(report)),
    };
  };
  const familyVerdict = async (family: string) => {
    const h = await api.health();
    const f = h.families?.[family] ?? h.isolation;
    return { verdict: f.verdict, reason: f.reason };
  };
  const jobDeps = {
    api,
    workDir: opts.workDir,
    runtime: opts.runtime,
    identity,
    familyVerdict,
    cancelled: async (suiteRun: string) => (await redis.exists(cancelKey(suiteRun))) === 1,
    now: deps.now,
  };

  const process = async (job: Job): Promise<FleetResult> => {
    // nothing to run and nothing another worker could read: failed now, with the reason, never retried
    if (job.data instanceof UnreadableJobData) throw new UnrecoverableError(`invalid_request: ${job.data.reason}`);
    const attempt = Math.max(1, job.attemptsStarted);
    const log: AttemptLog = { kind: "attempt_started", attempt, worker: await identity() };
    await job.log(JSON.stringify(log));
    try {
      return await runJob(job.data, attempt, jobDeps);
    } catch (err) {
      // a bad payload fails the same way everywhere: never retried
      if (err instanceof JobRefused) throw new UnrecoverableError(`${err.code}: ${err.message}`);
      throw err;
    }
  };

  // BullMQ's manual processing: a Worker per queue without a processor, so this process alone decides when to fetch (take-loop.ts)
  const sources = opts.families.flatMap((family) =>
    (["replay", "live"] as const).map((model) => {
      const w = new ReadingWorker(queueFor(opts.runtime, family, model), null, {
        connection,
        autorun: false,
        lockDuration: opts.lockDurationMs,
        stalledInterval: opts.stalledIntervalMs,
        // one stall (a worker died) hands the case on once more; a second one fails it, so a case that kills workers cannot loop
        maxStalledCount: 1,
      });
      w.on("error", sayOnce(`queue ${w.name}`, deps));
      return { family, model, w };
    }),
  );
  await Promise.all(sources.map((s) => s.w.waitUntilReady()));
  // the stall check runs on every queue this worker serves, as a processing Worker's would: a dead worker's case moves on
  for (const s of sources) s.w.startStalledCheckTimer().catch((err: Error) => deps.onError(`queue ${s.w.name}: stall check: ${err.message}`));

  const stateDirArg = shellWord(deps.stateDir);
  const watch = createTakeWatch({
    verdict: familyVerdict,
    now: deps.now,
    recheckMs: RECHECK_MS,
    log: deps.onNotice,
    commands: {
      probe: (family) => `${deps.clientProgram} probe --family ${family} --state-dir ${stateDirArg}`,
      buildImage: (family) => `npm run image:build -- --family ${family} --state-dir ${stateDirArg}`,
    },
  });
  let closing = false;
  let tokens = 0;
  const runOne = async (job: Job, token: string) => {
    // the lock is renewed while the case runs, as BullMQ's own processing loop does (every half lock duration)
    const renew = setInterval(() => void job.extendLock(token, opts.lockDurationMs).catch(() => undefined), Math.max(50, opts.lockDurationMs / 2));
    try {
      let outcome: { ok: true; value: FleetResult } | { ok: false; err: Error };
      try {
        outcome = { ok: true, value: await process(job) };
      } catch (err) {
        outcome = { ok: false, err: err instanceof Error ? err : new Error(String(err)) };
      }
      // close(): the daemon is stopping under the case; it is left to stall and go to another worker, not failed here
      if (closing) return;
      await finish(job, () => (outcome.ok ? job.moveToCompleted(outcome.value, token, false) : job.moveToFailed(outcome.err, token, false)));
    } finally {
      clearInterval(renew);
    }
  };
  const finish = async (job: Job, write: () => Promise<unknown>) => {
    for (let i = 0; ; i++) {
      try {
        await write();
        return;
      } catch (err) {
        const m = (err as Error)?.message ?? String(err);
        // the lock ran out (the worker was cut off from Redis longer than the lock): the stall check gave the case to another attempt, which counts
        if (/Missing lock|Missing key|Lock mismatch|not in the active state/i.test(m) || closing || i >= FINISH_RETRIES) {
          deps.onError(`case ${job.id}: its result was not recorded (${m}); the case is counted by its next attempt`);
          return;
        }
        await sleep(1000);
      }
    }
  };
  const loop = startTakeLoop({
    slots: opts.concurrency,
    sources: sources.map((s) => ({
      ...s,
      name: s.w.name,
      take: async () => {
        const token = `${s.w.id}:${++tokens}`;
        const job = await s.w.getNextJob(token, { block: false });
        return job === undefined ? undefined : { job, token };
      },
    })),
    mayTake: async (s) => !closing && (await watch.mayTake(s.family, s.model)),
    run: ({ job, token }) => runOne(job, token),
    idleMs: IDLE_MS,
    sleep,
    onError: deps.onError,
  });
  return {
    identity,
    async close() {
      closing = true;
      await loop.stop();
      await Promise.allSettled(sources.map((s) => s.w.close(true)));
      await closeAll([control]);
    },
  };
}

/** ioredis repeats its connection error on every reconnect attempt: a Redis away for a while is said once a minute per connection */
function sayOnce(what: string, deps: Pick<WorkerDeps, "now" | "onError">): (err: Error) => void {
  let last = { message: "", at: Number.NEGATIVE_INFINITY };
  return (err) => {
    if (err.message === last.message && deps.now() - last.at < ERROR_REPEAT_MS) return;
    last = { message: err.message, at: deps.now() };
    deps.onError(`${what}: ${err.message}`);
  };
}
