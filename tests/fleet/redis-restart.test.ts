import fs from "node:fs";
import path from "node:path";
import { Queue } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFleetBase, stopFleetBase } from "./fleet-base.js";
import { EvalReport } from "../../daemon/src/contracts/eval-report.js";
import { createDockerClient } from "../../daemon/src/sandbox/docker-client.js";
import { queueFor } from "../../eval/src/fleet/queue-names.js";
import { connectionOptions, parseQueueUrl } from "../../eval/src/fleet/queue-url.js";
import {
  containersOf,
  REPO,
  type RedisHandle,
  restartRedis,
  runClient,
  startWorker,
  stopRedisSaving,
  type WorkerHandle,
  workerStateDir,
} from "../../scripts/fleet-kit.js";

/**
 * Redis restarted during a suite: the runner and both workers reconnect and
 * the suite finishes, every case counted once. Redis is stopped the way a
 * graceful restart stops it (SHUTDOWN SAVE: its snapshot is written first),
 * so the queue survives it; a Redis that loses the queue is another failure
 * (the runner adds a lost job again, fleet-run.ts).
 */
const docker = createDockerClient(process.env);
const CASES = ["linkcheck-canonical", "linkcheck-commands", "linkcheck-stale-version", "linkcheck-always-empty"];
const FAST = ["--lock-duration-ms", "10000", "--stalled-interval-ms", "5000", "--families", "node"];
let base: string;
let redis: RedisHandle;
let imageLock: string;
const workers: WorkerHandle[] = [];

beforeAll(async () => {
  ({ base, imageLock, redis } = await startFleetBase("ma-fleet-restart-", ["node"]));
}, 900_000);

afterAll(() => stopFleetBase(workers, { base, redis }), 120_000);

describe("Redis restarted during a suite", () => {
  it("the runner and the workers reconnect; the suite finishes with every case once and passing, exit 0, no container left", async () => {
    for (const name of ["worker-r1", "worker-r2"])
      workers.push(await startWorker({ queue: redis.url, stateDir: workerStateDir(base, name, imageLock), id: name, args: FAST }));
    const out = path.join(base, "out");
    const client = runClient(["eval", "run", ...CASES.map((c) => path.join(REPO, "evals", c)), "--output", out, "--queue", redis.url, "--json"]);

    // a case running (a worker holds it), then Redis goes away for a few seconds
    const q = new Queue(queueFor("runc", "node", "replay"), { connection: connectionOptions(parseQueueUrl(redis.url)) });
    q.on("error", () => undefined);
    const deadline = Date.now() + 600_000;
    while ((await q.getActiveCount()) === 0) {
      if (Date.now() > deadline) throw new Error("no case started");
      await new Promise((r) => setTimeout(r, 200));
    }
    const before = redis.pid();
    await stopRedisSaving(redis);
    await new Promise((r) => setTimeout(r, 4000));
    await restartRedis(redis);
    await q.close();
    // a real restart (a new process) that found the queue in its snapshot
    expect(redis.pid()).not.toBe(before);
    expect(fs.readFileSync(path.join(redis.dir, "redis.log"), "utf8")).toMatch(/DB loaded from disk/);

    const res = await client;
    const report = EvalReport.parse(JSON.parse(fs.readFileSync(path.join(out, "eval-report.json"), "utf8")));
    expect(
      report.cases.filter((c) => c.verdict !== "passed").map((c) => [c.id, c.verdict, c.error]),
      `${res.stderr}\n${workers.map((w) => w.stderr()).join("\n")}`,
    ).toEqual([]);
    expect(report.cases.map((c) => c.id)).toEqual([...CASES].sort());
    expect(res.code, res.stderr).toBe(0);
    // one --json case line per case: none counted twice
    expect(res.stdout.split("\n").filter((l) => l.startsWith('{"kind":"case"'))).toHaveLength(CASES.length);
    // a case whose lock ran out during the outage ran again: then it says so (attempts 2), once
    for (const c of report.cases) {
      expect(c.attempts, c.id).toBeGreaterThanOrEqual(1);
      expect(c.attempts, c.id).toBeLessThanOrEqual(2);
      expect(c.workers, c.id).toHaveLength(c.attempts);
    }
    const said = workers.flatMap((w) =>
      w
        .stderr()
        .split("\n")
        .filter((l) => /queue|Connection|ECONNREFUSED|result was not recorded/.test(l)),
    );
    for (const w of workers.splice(0)) {
      expect(await w.stop("SIGTERM"), w.stderr()).toBe(0);
      expect(await containersOf(docker, w.stateDir)).toEqual([]);
    }
    // what this run showed, for the record: how each case went, and what the processes said about the outage
    console.log(JSON.stringify(report.cases.map((c) => ({ id: c.id, attempts: c.attempts, workers: c.workers?.map((w) => w.worker_id) }))));
    console.log(`runner stderr:\n${res.stderr}\nworker stderr (queue lines):\n${said.join("\n")}`);
  }, 1_200_000);
});
