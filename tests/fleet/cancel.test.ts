import fs from "node:fs";
import path from "node:path";
import { Queue } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFleetBase, stopFleetBase } from "./fleet-base.js";
import { ApiClient, EXIT } from "../../client-lib/index.js";
import { CaseResult, EvalReport } from "../../daemon/src/contracts/eval-report.js";
import { createDockerClient } from "../../daemon/src/sandbox/docker-client.js";
import { POOL_PURPOSE, PURPOSE_LABEL } from "../../daemon/src/sandbox/labels.js";
import { cancelKey, queueName } from "../../eval/src/fleet/queue-names.js";
import { connectionOptions, parseQueueUrl } from "../../eval/src/fleet/queue-url.js";
import { containersOf, type RedisHandle, REPO, runClient, startClient, startWorker, type WorkerHandle, workerStateDir } from "../../scripts/fleet-kit.js";

/**
 * Cancelling an eval run on the fleet (issue 15), with real processes: our
 * own Redis (password from a file), two workers that take node cases one at
 * a time, a suite of one quick case and three slow ones (their test suite
 * sleeps), so some cases are still queued while others run in sandboxes.
 * Ctrl-C on `eval run --queue` and `eval cancel` from another process must
 * each remove the queued jobs, cancel the running runs on the workers (their
 * status `cancelled`), leave no container of a run (the workers' daemons keep
 * idle pool members while they run; stopped, nothing), write no report, and a later
 * `eval run` on the same output folder resumes: kept results stay, the rest
 * run again (not stopped by the old cancel).
 */
const docker = createDockerClient(process.env);
const FAST = ["--lock-duration-ms", "10000", "--stalled-interval-ms", "5000", "--families", "node"];
// the slack a cancel has: a slow case started beside the quick one still sleeps ~3 x SLOW_S (two candidate runs and the
// Verifier's) when the quick result appears, against a cancel that reaches its worker within seconds; the resumed run then
// waits it out for every slow case again, so more only made the file longer
const SLOW_S = 10;
const SLOW = ["slow-1", "slow-2", "slow-3"];
let base: string;
let redis: RedisHandle;
let imageLock: string;
let suite: string;
const workers: WorkerHandle[] = [];

beforeAll(async () => {
  ({ base, imageLock, redis } = await startFleetBase("ma-fleet-cancel-", ["node"]));
  // the quick case first: FIFO, so it has a result before the slow ones are cancelled
  suite = path.join(base, "suite");
  fs.cpSync(path.join(REPO, "evals/linkcheck-canonical"), path.join(suite, "a-quick"), { recursive: true });
  for (const id of SLOW) {
    const dir = path.join(suite, id);
    fs.cpSync(path.join(REPO, "evals/linkcheck-canonical"), dir, { recursive: true });
    // every run_tests (and the Verifier's) takes SLOW_S more: a case stays running long enough to be cancelled in its sandbox
    fs.writeFileSync(
      path.join(dir, "repo/tests/test_slow.js"),
      `import test from "node:test";\ntest("waits", async () => { await new Promise((r) => setTimeout(r, ${SLOW_S * 1000})); });\n`,
    );
  }
  for (const name of ["worker-a", "worker-b"]) {
    workers.push(
      await startWorker({
        queue: redis.queueUrl,
        passwordFile: redis.passwordFile,
        stateDir: workerStateDir(base, name, imageLock),
        id: name,
        args: FAST,
      }),
    );
  }
}, 900_000);

afterAll(() => stopFleetBase(workers, { base, redis }), 120_000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 600_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(250);
  }
}

/** A worker's containers that belong to a run (its daemon also keeps idle pool members ready while it runs). */
async function runContainersOf(w: WorkerHandle) {
  return (await containersOf(docker, w.stateDir)).filter((c) => c.Labels[PURPOSE_LABEL] !== POOL_PURPOSE);
}

const apiOf = (w: WorkerHandle) => new ApiClient({ socketPath: path.join(w.stateDir, "daemon.sock"), stateDir: w.stateDir });
const suiteRunOf = (out: string) => (JSON.parse(fs.readFileSync(path.join(out, "fleet.json"), "utf8")) as { suite_run: string }).suite_run;

/** This eval run's jobs in the node queue, by state. */
async function jobsOf(suiteRun: string): Promise<Record<string, string[]>> {
  const q = new Queue(queueName("runc", "node"), { connection: connectionOptions(parseQueueUrl(redis.url)) });
  try {
    const out: Record<string, string[]> = {};
    for (const state of ["waiting", "delayed", "prioritized", "paused", "active", "completed", "failed"] as const)
      out[state] = (await q.getJobs([state])).map((j) => j.id!).filter((id) => id.startsWith(`${suiteRun}-`));
    return out;
  } finally {
    await q.close();
  }
}

/** Waits until a slow case runs in a sandbox on some worker (a container of its daemon exists): the moment to cancel. */
async function slowCaseInSandbox(out: string): Promise<void> {
  await until("the quick case's result", async () => fs.existsSync(path.join(out, "cases", "a-quick.json")));
  await until("a slow case in a sandbox", async () => {
    for (const w of workers) {
      const runs = (await apiOf(w).listRuns()).runs;
      if (runs.some((r) => r.status === "running") && (await runContainersOf(w)).length > 0) return true;
    }
    return false;
  });
}

/** After a cancel: no queued job of the run, every run on every worker ended, none of the slow ones completed, no container. */
async function expectCancelledEverywhere(suiteRun: string, runsBefore: Map<string, Set<string>>): Promise<void> {
  const jobs = await jobsOf(suiteRun);
  expect({ waiting: jobs.waiting, delayed: jobs.delayed, prioritized: jobs.prioritized, paused: jobs.paused }).toEqual({
    waiting: [],
    delayed: [],
    prioritized: [],
    paused: [],
  });
  expect((await redis.cli(["exists", cancelKey(suiteRun)])).trim()).toBe("1");
  let cancelledRuns = 0;
  for (const w of workers) {
    const api = apiOf(w);
    // the workers poll the cancel key each second; their daemons then stop the run and remove its sandboxes
    const runs = await until(
      `${w.id}'s runs to end`,
      async () => {
        const all = (await api.listRuns()).runs.filter((r) => !runsBefore.get(w.id)?.has(r.run_id));
        return all.every((r) => ["completed", "failed", "cancelled", "budget_exhausted", "interrupted"].includes(r.status)) ? all : null;
      },
      120_000,
    );
    // only the quick case may have completed; every slow one that started was cancelled
    for (const r of runs) if (r.status !== "cancelled") expect(r.status, `${w.id} ${r.run_id}`).toBe("completed");
    cancelledRuns += runs.filter((r) => r.status === "cancelled").length;
    await until(`${w.id}'s run containers gone`, async () => (await runContainersOf(w)).length === 0, 120_000);
  }
  expect(cancelledRuns, "a slow case was running when cancelled").toBeGreaterThan(0);
}

function runsNow(): Promise<Map<string, Set<string>>> {
  return Promise.all(workers.map(async (w) => [w.id, new Set((await apiOf(w).listRuns()).runs.map((r) => r.run_id))] as const)).then((e) => new Map(e));
}

/** The output folder after a cancel: the quick case's result is kept, no slow case has one, no report is written. */
function expectOutputAfterCancel(out: string): void {
  const results = fs.readdirSync(path.join(out, "cases")).sort();
  expect(results).toEqual(["a-quick.json"]);
  expect(CaseResult.parse(JSON.parse(fs.readFileSync(path.join(out, "cases", "a-quick.json"), "utf8")))).toMatchObject({ verdict: "passed" });
  expect(fs.existsSync(path.join(out, "eval-report.json"))).toBe(false);
}

describe("cancelling an eval run on the fleet", () => {
  it("Ctrl-C on eval run --queue: exit 4, queued jobs removed, running cases cancelled on their workers, no container, no report", async () => {
    const out = path.join(base, "out-sigint");
    const before = await runsNow();
    const runner = startClient(["eval", "run", suite, "--output", out, ...redis.queueArgs]);
    await slowCaseInSandbox(out);
    runner.proc.kill("SIGINT");
    const res = await runner.done;
    expect({ code: res.code, stderr: res.stderr }).toMatchObject({ code: EXIT.cancelled, stderr: expect.stringContaining("eval run: cancelled;") });
    expect(res.stderr).toContain("no report written");
    await expectCancelledEverywhere(suiteRunOf(out), before);
    expectOutputAfterCancel(out);
  }, 1_200_000);

  it("regression: eval cancel from another process stops the waiting runner (it re-added the removed jobs and waited on); eval run again resumes under a new id and runs the rest", async () => {
    const out = path.join(base, "out-cancel");
    const before = await runsNow();
    const runner = startClient(["eval", "run", suite, "--output", out, ...redis.queueArgs]);
    await slowCaseInSandbox(out);
    const first = suiteRunOf(out);
    const cancel = await runClient(["eval", "cancel", ...redis.queueArgs, "--output", out]);
    expect({ code: cancel.code, stderr: cancel.stderr }).toEqual({ code: 0, stderr: "" });
    expect(cancel.stdout).toMatch(/^cancelled: \d+ queued cases removed, \d+ running ones told to stop\n$/);
    const res = await until(
      "the runner to exit",
      async () => {
        const r = await Promise.race([runner.done, sleep(1000).then(() => null)]);
        return r;
      },
      120_000,
    ).catch((err) => {
      runner.proc.kill("SIGKILL");
      throw err;
    });
    expect({ code: res.code, stderr: res.stderr }).toMatchObject({
      code: EXIT.cancelled,
      stderr: expect.stringContaining("eval run: cancelled by `eval cancel`;"),
    });
    await expectCancelledEverywhere(first, before);
    expectOutputAfterCancel(out);

    // resumed: a new id (the old one's cancel key would stop every case again), the quick case kept, the slow ones run to the end
    const again = await runClient(["eval", "run", suite, "--output", out, ...redis.queueArgs, "--json"]);
    expect(suiteRunOf(out)).not.toBe(first);
    const report = EvalReport.parse(JSON.parse(fs.readFileSync(path.join(out, "eval-report.json"), "utf8")));
    expect(report.cases.map((c) => [c.id, c.status])).toEqual([["a-quick", "completed"], ...SLOW.map((id) => [id, "completed"])]);
    expect(again.stdout.split("\n").filter((l) => l.startsWith('{"kind":"case"'))).toHaveLength(SLOW.length);
    expect(again.code, again.stderr).toBe(EXIT.ok);
    // nothing of the cancelled run is left in Redis, nothing of the finished one is queued
    expect(Object.values(await jobsOf(first)).flat()).toEqual([]);
    // stopped, each worker's daemon removes its pool too: nothing of any worker is left
    for (const w of workers) {
      expect(await w.stop("SIGTERM")).toBe(0);
      expect(await containersOf(docker, w.stateDir)).toEqual([]);
    }
  }, 1_800_000);
});
