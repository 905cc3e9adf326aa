import os from "node:os";
import { Queue, UnrecoverableError, Worker, type Job } from "bullmq";
import { ApiClient } from "../../../client/src/api-client.js";
import { connectionOptions, type QueueTarget } from "../../../eval/src/fleet/queue-url.js";
import { cancelKey, queueName } from "../../../eval/src/fleet/queue-names.js";
import { pingQueue } from "../../../eval/src/fleet/queue-ping.js";
import { closeAll, redisOf } from "../../../eval/src/fleet/redis-like.js";
import type { WorkerIdentity } from "../contracts/eval-report.js";
import type { AttemptLog, FleetResult } from "../contracts/fleet.js";
import { canonicalJson, sha256Hex } from "../workspace/hash.js";
import { JobRefused, runJob } from "./run-job.js";
import type { WorkerOptions } from "./worker-args.js";

/**
 * A worker of an eval fleet: one mini-agent daemon (its own state dir,
 * ledger, image lock, credentials and isolation reports) started in this
 * process, and BullMQ workers on the queues of its runtime and families that
 * hand each case to that daemon over its own socket, exactly the path a local
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
}

export async function startWorker(opts: WorkerOptions, deps: WorkerDeps): Promise<RunningWorker> {
  const api = new ApiClient({ socketPath: deps.socketPath, stateDir: deps.stateDir });
  const connection = connectionOptions(deps.queue);
  // one plain queue handle for the cancel key and the start-up ping
  const control = new Queue(queueName(opts.runtime, opts.families[0]!), { connection });
  control.on("error", (err) => deps.onError(`queue: ${err.message}`));
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
  const workers = opts.families.map((family) => {
    const w = new Worker(queueName(opts.runtime, family), process, {
      connection,
      concurrency: opts.concurrency,
      lockDuration: opts.lockDurationMs,
      stalledInterval: opts.stalledIntervalMs,
      // one stall (a worker died) hands the case on once more; a second one fails it, so a case that kills workers cannot loop
      maxStalledCount: 1,
    });
    w.on("error", (err) => deps.onError(`worker ${family}: ${err.message}`));
    return w;
  });
  await Promise.all(workers.map((w) => w.waitUntilReady()));
  return {
    identity,
    async close() {
      await Promise.allSettled(workers.map((w) => w.close(true)));
      await closeAll([control]);
    },
  };
}
