import fs from "node:fs";
import path from "node:path";
import { Queue } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFleetBase, stopFleetBase } from "./fleet-base.js";
import { EvalReport } from "../../daemon/src/contracts/eval-report.js";
import { createDockerClient } from "../../daemon/src/sandbox/docker-client.js";
import { AttemptLog } from "../../daemon/src/contracts/fleet.js";
import { queueName } from "../../eval/src/fleet/queue-names.js";
import { connectionOptions, parseQueueUrl } from "../../eval/src/fleet/queue-url.js";
import { containersOf, monitorRedis, REPO, runClient, type RedisHandle, startWorker, type WorkerHandle, workerStateDir } from "../../scripts/fleet-kit.js";

/**
 * Eval fleets end to end (issue 15): Redis from scripts/redis-ensure.sh on
 * 127.0.0.1 with a password, two mini-agent-worker processes with separate
 * state dirs, the real client, real Docker. Lock and stall times are small
 * (worker options) so a killed worker's case moves on in seconds.
 */
const docker = createDockerClient(process.env);
const CANARY = "sk-fleet-canary-7f3a9c0d2e";
const SHIPPED = path.join(REPO, "evals");
// small enough that the hand-over takes seconds, large enough that a busy shared machine still renews a live worker's lock (every lockDuration/2)
const FAST = ["--lock-duration-ms", "10000", "--stalled-interval-ms", "5000"];
let base: string;
let redis: RedisHandle;
let imageLock: string;
const workers: WorkerHandle[] = [];

beforeAll(async () => {
  ({ base, imageLock, redis } = await startFleetBase("ma-fleet-", ["node", "python", "go"]));
}, 900_000);

afterAll(() => stopFleetBase(workers, { base, redis }), 120_000);

async function worker(name: string, stateDir = workerStateDir(base, name, imageLock)): Promise<WorkerHandle> {
  const w = await startWorker({ queue: redis.queueUrl, passwordFile: redis.passwordFile, stateDir, id: name, args: FAST, env: { MINI_AGENT_API_KEY: CANARY } });
  workers.push(w);
  return w;
}

const readReport = (out: string) => EvalReport.parse(JSON.parse(fs.readFileSync(path.join(out, "eval-report.json"), "utf8")));

/** The worker that holds a running case now (from the job's attempt log), or null. */
async function activeCaseOn(workerId: string): Promise<string | null> {
  const connection = connectionOptions(parseQueueUrl(redis.url));
  for (const family of ["node", "python", "go"] as const) {
    const q = new Queue(queueName("runc", family), { connection });
    try {
      for (const job of await q.getJobs(["active"])) {
        const { logs } = await q.getJobLogs(job.id!, 0, 100, true);
        const last = logs
          .map((l) => AttemptLog.safeParse(JSON.parse(l)))
          .filter((p) => p.success)
          .at(-1);
        if (last?.success && last.data.worker.worker_id === workerId) return job.data.case_id as string;
      }
    } finally {
      await q.close();
    }
  }
  return null;
}

describe("eval run --queue on two workers", () => {
  it("runs the shipped suite; a worker SIGKILLed mid-case loses it to the other (attempts 2, both workers), every case counted once, no container left, the canary never in Redis", async () => {
    const monitor = monitorRedis(redis);
    const a = await worker("worker-a");
    const b = await worker("worker-b");
    const out = path.join(base, "out");
    const client = runClient(["eval", "run", SHIPPED, "--output", out, ...redis.queueArgs, "--json"]);

    // kill worker-a while it holds a case
    let killed: string | null = null;
    const deadline = Date.now() + 600_000;
    while (killed === null && Date.now() < deadline) {
      killed = await activeCaseOn("worker-a");
      if (killed === null) await new Promise((r) => setTimeout(r, 200));
    }
    expect(killed, "worker-a never took a case").not.toBeNull();
    await a.stop("SIGKILL");

    const res = await client;
    monitor.stop();
    const report = readReport(out);
    expect(
      report.cases.filter((c) => c.verdict !== "passed").map((c) => [c.id, c.verdict, c.attempts, c.error, c.workers?.map((w) => w.worker_id)]),
      "cases that did not pass",
    ).toEqual([]);
    expect({ code: res.code, stderr: res.stderr }).toEqual({ code: 0, stderr: "" });
    const ids = fs.readdirSync(SHIPPED).filter((d) => fs.existsSync(path.join(SHIPPED, d, "expect.json")));
    // every case once, all passed
    expect(report.cases.map((c) => c.id)).toEqual([...ids].sort());
    const k = report.cases.find((c) => c.id === killed)!;
    expect(k.attempts).toBe(2);
    expect(k.workers?.map((w) => w.worker_id)).toEqual(["worker-a", "worker-b"]);
    // the case line of --json came once per case
    const caseLines = res.stdout.split("\n").filter((l) => l.startsWith('{"kind":"case"'));
    expect(caseLines).toHaveLength(ids.length);
    // --concurrency 1 (the default) counts per worker: worker-a held that one case at the kill, so every other case ran once, on one worker
    for (const c of report.cases.filter((x) => x.id !== killed)) {
      expect(c.attempts, c.id).toBe(1);
      expect(c.workers, c.id).toHaveLength(1);
      expect(c.workers![0]).toMatchObject({ runtime: "runc", image_digest: expect.stringMatching(/^sha256:/) });
      expect(fs.statSync(path.join(out, c.trace_file!)).size).toBeGreaterThan(0);
    }

    // restart the killed worker on its state dir: its daemon's start-up reaper removes what the kill left
    const a2 = await worker("worker-a2", a.stateDir);
    await a2.stop("SIGTERM");
    await b.stop("SIGTERM");
    expect(await containersOf(docker, a.stateDir)).toEqual([]);
    expect(await containersOf(docker, b.stateDir)).toEqual([]);

    // the monitor saw the workers' writes (a positive control), and never the credential
    const seen = monitor.text();
    expect(seen).toContain("attempt_started");
    expect(seen).toContain(killed!);
    expect(seen).not.toContain(CANARY);
    const dump = await redis.cli(["--scan"]);
    for (const key of dump.split("\n").filter(Boolean)) {
      const type = (await redis.cli(["type", key])).trim();
      const cmd = {
        string: ["get", key],
        hash: ["hgetall", key],
        list: ["lrange", key, "0", "-1"],
        set: ["smembers", key],
        zset: ["zrange", key, "0", "-1"],
        stream: ["xrange", key, "-", "+"],
      }[type];
      if (cmd) expect(await redis.cli(cmd), key).not.toContain(CANARY);
    }
  }, 1_800_000);

  it("regression: a case that fails by its own verdict is not retried (attempts 1, one worker)", async () => {
    const suite = path.join(base, "suite-failing");
    const c = path.join(suite, "wrong-expectation");
    fs.cpSync(path.join(SHIPPED, "linkcheck-canonical"), c, { recursive: true });
    const expect_ = JSON.parse(fs.readFileSync(path.join(c, "expect.json"), "utf8"));
    fs.writeFileSync(path.join(c, "expect.json"), JSON.stringify({ ...expect_, status: "failed", reason: "verification_failed" }));
    // only worker-c may take this case
    for (const old of workers.splice(0)) await old.stop("SIGTERM");
    const w = await worker("worker-c");
    const out = path.join(base, "out-failing");
    const res = await runClient(["eval", "run", suite, "--output", out, ...redis.queueArgs]);
    expect(res.code).toBe(1);
    const r = readReport(out).cases[0]!;
    expect(r).toMatchObject({ id: "wrong-expectation", verdict: "failed", attempts: 1, status: "completed" });
    expect(r.workers?.map((x) => x.worker_id)).toEqual(["worker-c"]);
    await w.stop("SIGTERM");
    expect(await containersOf(docker, w.stateDir)).toEqual([]);
  }, 900_000);
});
