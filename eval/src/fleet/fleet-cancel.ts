import type { JobType, Queue } from "bullmq";
import { cancelKey } from "./queue-names.js";
import type { RedisLike } from "./redis-like.js";

const QUEUED: JobType[] = ["waiting", "delayed", "prioritized", "paused", "waiting-children"];
const FINISHED: JobType[] = ["completed", "failed"];

/**
 * Cancels an eval run on the fleet: the cancel key first (workers poll it and
 * cancel the case's run through their own daemon, which removes its
 * sandboxes; a waiting `eval run` polls it too and stops), then every job of
 * this run that no worker holds is removed: the queued ones, and the finished
 * ones nobody will read now (a case's tar would otherwise stay in Redis).
 * Jobs are matched by their id's prefix (queue-names.ts jobIdOf), so another
 * eval run on the same queue is never touched.
 */
export async function cancelSuite(redis: RedisLike, queues: Queue[], suiteRun: string, ttlS: number): Promise<{ removed: number; running: number }> {
  await redis.set(cancelKey(suiteRun), "1", "EX", ttlS);
  const queued = await removeSuiteJobs(queues, suiteRun, QUEUED);
  await removeSuiteJobs(queues, suiteRun, FINISHED);
  let running = queued.locked;
  for (const q of queues) for (const job of await q.getJobs(["active"])) if (mine(job.id, suiteRun)) running++;
  return { removed: queued.removed, running };
}

/** true once `eval cancel` or a Ctrl-C'd runner cancelled this eval run (the key outlives both by a day). */
export async function isCancelled(redis: RedisLike, suiteRun: string): Promise<boolean> {
  return (await redis.exists(cancelKey(suiteRun))) === 1;
}

/** What a cancelled eval run left in Redis, removed before it is resumed under a new id: its cases that ended after the cancel. */
export async function dropCancelledRun(queues: Queue[], suiteRun: string): Promise<void> {
  await removeSuiteJobs(queues, suiteRun, [...QUEUED, ...FINISHED]);
}

const mine = (id: string | undefined, suiteRun: string) => id?.startsWith(`${suiteRun}-`) === true;

async function removeSuiteJobs(queues: Queue[], suiteRun: string, states: JobType[]): Promise<{ removed: number; locked: number }> {
  let removed = 0;
  let locked = 0;
  for (const q of queues) {
    for (const job of await q.getJobs(states)) {
      if (!mine(job.id, suiteRun)) continue;
      // a job a worker took in the meantime is locked: removing it fails, and the cancel key stops it
      if (
        await job.remove().then(
          () => true,
          () => false,
        )
      )
        removed++;
      else locked++;
    }
  }
  return { removed, locked };
}
