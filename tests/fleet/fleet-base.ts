import fs from "node:fs";
import path from "node:path";
import type { ImageFamily } from "../../daemon/src/contracts/test-report.js";
import { createDockerClient } from "../../daemon/src/sandbox/docker-client.js";
import { type RedisHandle, startRedis, type WorkerHandle } from "../../scripts/fleet-kit.js";
import { tempDir } from "../e2e/harness.js";
import { pinTestImage } from "../kit/sandbox-image.js";

/** What every fleet test file starts from: a temp folder, the families' pinned images in one lock, and its own Redis. */
export interface FleetBase {
  base: string;
  imageLock: string;
  redis: RedisHandle;
}

export async function startFleetBase(prefix: string, families: readonly ImageFamily[]): Promise<FleetBase> {
  await createDockerClient(process.env).ping();
  const base = tempDir(prefix);
  const imageLock = path.join(base, "sandbox-image.lock.json");
  for (const f of families) await pinTestImage(imageLock, f);
  return { base, imageLock, redis: await startRedis(path.join(base, "redis")) };
}

/** Kills the file's workers (their daemons' sandboxes go with the tests' own checks), stops its Redis, removes its folder. */
export async function stopFleetBase(workers: WorkerHandle[], f: Partial<FleetBase>): Promise<void> {
  for (const w of workers.splice(0)) await w.stop("SIGKILL");
  await f.redis?.stop();
  if (f.base) fs.rmSync(f.base, { recursive: true, force: true });
}
