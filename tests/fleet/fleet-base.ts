import fs from "node:fs";
import path from "node:path";
import type { BuiltinFamily } from "../../daemon/src/contracts/sandbox.js";
import { createDockerClient } from "../../daemon/src/sandbox/docker-client.js";
import { containersOf, type RedisHandle, startRedis, type WorkerHandle } from "../../scripts/fleet-kit.js";
import { tempDir } from "../e2e/harness.js";
import { pinTestImage } from "../kit/sandbox-image.js";

/** What every fleet test file starts from: a temp folder, the families' pinned images in one lock, and its own Redis. */
export interface FleetBase {
  base: string;
  imageLock: string;
  redis: RedisHandle;
}

export async function startFleetBase(prefix: string, families: readonly BuiltinFamily[]): Promise<FleetBase> {
  await createDockerClient(process.env).ping();
  const base = tempDir(prefix);
  const imageLock = path.join(base, "sandbox-image.lock.json");
  for (const f of families) await pinTestImage(imageLock, f);
  return { base, imageLock, redis: await startRedis(path.join(base, "redis")) };
}

/**
 * Stops the file's workers still running (a test that failed before its own stop): SIGTERM first, so
 * each worker's daemon drains its sandbox pool, SIGKILL after 30 s; then removes whatever carries a
 * worker daemon's instance label, so a failed test leaves no container behind for the next file or the
 * leftover check. Then stops its Redis and removes its folder.
 */
export async function stopFleetBase(workers: WorkerHandle[], f: Partial<FleetBase>): Promise<void> {
  const docker = createDockerClient(process.env);
  for (const w of workers.splice(0)) {
    const stopped = await Promise.race([w.stop("SIGTERM"), new Promise<null>((r) => setTimeout(() => r(null), 30_000))]);
    if (stopped === null) await w.stop("SIGKILL");
    for (const c of await containersOf(docker, w.stateDir))
      await docker
        .getContainer(c.Id)
        .remove({ force: true, v: true })
        .catch(() => undefined);
  }
  await f.redis?.stop();
  if (f.base) fs.rmSync(f.base, { recursive: true, force: true });
}
