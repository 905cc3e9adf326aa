import path from "node:path";
import { Queue } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFleetBase, stopFleetBase } from "./fleet-base.js";
import { createDockerClient } from "../../daemon/src/sandbox/docker-client.js";
import { queueFor } from "../../eval/src/fleet/queue-names.js";
import { connectionOptions, parseQueueUrl } from "../../eval/src/fleet/queue-url.js";
import { containersOf, enqueueCase, REPO, type RedisHandle, startWorker, type WorkerHandle, workerStateDir } from "../../scripts/fleet-kit.js";

/**
 * `--concurrency N` counts cases per WORKER process, over all its family
 * queues: real Redis, a real mini-agent-worker on node, python and go, real
 * Docker. What runs at once is read from Redis (the active jobs of every
 * queue), sampled while the cases run.
 */
const docker = createDockerClient(process.env);
const FAMILIES = ["node", "python", "go"] as const;
const CASES = ["linkcheck-canonical", "linkcheck-commands", "semverlite-canonical", "wordwrap-canonical"];
let base: string;
let redis: RedisHandle;
let imageLock: string;
const workers: WorkerHandle[] = [];

beforeAll(async () => {
  ({ base, imageLock, redis } = await startFleetBase("ma-fleet-conc-", FAMILIES));
}, 900_000);

afterAll(() => stopFleetBase(workers, { base, redis }), 120_000);

/** Queues all CASES, runs one worker with `--concurrency n` until they are done; the most cases that were active at once. */
async function mostAtOnce(name: string, n: number, suiteRun: string): Promise<number> {
  const jobs = [];
  for (const c of CASES) jobs.push(await enqueueCase(redis.url, path.join(REPO, "evals", c), { suiteRun }));
  const w = await startWorker({
    queue: redis.url,
    stateDir: workerStateDir(base, name, imageLock),
    id: name,
    args: ["--concurrency", String(n), "--families", FAMILIES.join(",")],
  });
  workers.push(w);
  const connection = connectionOptions(parseQueueUrl(redis.url));
  const queues = FAMILIES.map((f) => new Queue(queueFor("runc", f, "replay"), { connection }));
  let most = 0;
  try {
    const deadline = Date.now() + 900_000;
    for (;;) {
      const active = (await Promise.all(queues.map((q) => q.getActiveCount()))).reduce((a, b) => a + b, 0);
      most = Math.max(most, active);
      const states = await Promise.all(jobs.map((j) => queues.find((q) => q.name === j.queue)!.getJobState(j.jobId)));
      if (states.every((s) => s === "completed" || s === "failed")) {
        // each case ran to a result (a passing one): the sampling watched real runs, not refusals
        for (const j of jobs) {
          const job = await queues.find((q) => q.name === j.queue)!.getJob(j.jobId);
          expect({ id: j.caseId, state: await job!.getState(), verdict: job!.returnvalue?.result?.verdict }).toEqual({
            id: j.caseId,
            state: "completed",
            verdict: "passed",
          });
        }
        break;
      }
      if (Date.now() > deadline) throw new Error(`cases not done in time: ${states.join(",")}\n${w.stderr()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    await Promise.all(queues.map((q) => q.close()));
  }
  expect(await w.stop("SIGTERM")).toBe(0);
  expect(await containersOf(docker, w.stateDir)).toEqual([]);
  return most;
}

describe("mini-agent-worker --concurrency", () => {
  it("regression: --concurrency 1 on node,python,go runs ONE case at a time (it ran one per family queue: up to three)", async () => {
    expect(await mostAtOnce("worker-c1", 1, "c1c1c1c1c1c1c1c1")).toBe(1);
  }, 1_200_000);

  it("--concurrency 2 does run two cases at once", async () => {
    expect(await mostAtOnce("worker-c2", 2, "c2c2c2c2c2c2c2c2")).toBe(2);
  }, 1_200_000);
});
