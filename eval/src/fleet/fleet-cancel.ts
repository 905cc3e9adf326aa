import type { Queue } from "bullmq";
import { cancelKey } from "./queue-names.js";
import type { RedisLike } from "./redis-like.js";

/**
 * Cancels an eval run on the fleet: the cancel key first (workers poll it and
 * cancel the case's run through their own daemon, which removes its
 * sandboxes), then every job of this run that no worker holds is removed.
 * Jobs are matched by their id's prefix (queue-names.ts jobIdOf), so another
 * eval run on the same queue is never touched.
 */
export async function cancelSuite(redis: RedisLike, queues: Queue[], suiteRun: string, ttlS: number): Promise<{ removed: number; running: number }> {
  await redis.set(cancelKey(suiteRun), "1", "EX", ttlS);
  let removed = 0;
  let running = 0;
  const mine = (id: string | undefined) => id?.startsWith(`${suiteRun}-`) === true;
  for (const q of queues) {
    for (const job of await q.getJobs(["waiting", "delayed", "prioritized", "paused"])) {
      if (!mine(job.id)) continue;
      // a job a worker took in the meantime is locked: removing it fails, and the cancel key stops it
      if (
        await job.remove().then(
          () => true,
          () => false,
        )
      )
        removed++;
      else running++;
    }
    for (const job of await q.getJobs(["active"])) if (mine(job.id)) running++;
  }
  return { removed, running };
}
