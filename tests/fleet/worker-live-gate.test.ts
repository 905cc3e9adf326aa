import { execFile } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { Queue } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFleetBase, stopFleetBase } from "./fleet-base.js";
import { pinTestImage } from "../kit/sandbox-image.js";
import { shellRun } from "../kit/shell.js";
import { createDockerClient } from "../../daemon/src/sandbox/docker-client.js";
import { loadCase } from "../../eval/src/case-load.js";
import { packCase } from "../../eval/src/fleet/case-payload.js";
import { queueFor } from "../../eval/src/fleet/queue-names.js";
import { connectionOptions, parseQueueUrl } from "../../eval/src/fleet/queue-url.js";
import { containersOf, enqueueCase, REPO, type RedisHandle, runClient, startWorker, type WorkerHandle, workerStateDir } from "../../scripts/fleet-kit.js";
import { WORKER_EXIT } from "../../worker/src/worker-main.js";

/**
 * "A worker whose isolation report goes stale stops taking live jobs": a real
 * worker whose state dir has no passing node report leaves a live node case
 * QUEUED (for a worker that could run it) while it takes replay cases; once
 * `mini-agent-client probe` stores a passing report, it takes the live case.
 * Likewise a worker with no image of a family pinned in its state dir leaves
 * that family's replay cases queued until the image is there.
 */
/*
 * Forged jobs: raw BullMQ jobs with crafted data on the queue the worker takes from. Each must be failed
 * terminally with its reason while the worker stays up and runs the next case.
 */
const docker = createDockerClient(process.env);
let base: string;
let redis: RedisHandle;
let imageLock: string;
const workers: WorkerHandle[] = [];

beforeAll(async () => {
  ({ base, imageLock, redis } = await startFleetBase("ma-fleet-live-", ["node"]));
}, 900_000);

afterAll(() => stopFleetBase(workers, { base, redis }), 120_000);

async function until<T>(what: string, f: () => Promise<T | null>, ms = 600_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== null) return v;
    if (Date.now() > deadline) throw new Error(`not in time: ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** A worker of its own (a copy of the base's image lock) on `families`, and a queue handle per case. */
async function workerFor(id: string, families: string, cases: Array<{ queue: string }>) {
  const stateDir = workerStateDir(base, id, imageLock);
  const w = await startWorker({ queue: redis.url, stateDir, id, args: ["--families", families] });
  workers.push(w);
  const connection = connectionOptions(parseQueueUrl(redis.url));
  const queues = cases.map((c) => new Queue(c.queue, { connection }));
  return { stateDir, w, queues, close: () => Promise.all(queues.map((q) => q.close())) };
}

/** `ran` passes on the worker while `held` stays queued, never started, although the loop has gone round its queues (every half second) many times */
async function heldWhileOtherRuns(ran: { q: Queue; jobId: string }, held: { q: Queue; jobId: string }): Promise<void> {
  await until("the other case done", async () => ((await ran.q.getJobState(ran.jobId)) === "completed" ? true : null));
  expect((await ran.q.getJob(ran.jobId))!.returnvalue.result.verdict).toBe("passed");
  await new Promise((r) => setTimeout(r, 3000));
  expect(await held.q.getJobState(held.jobId)).toBe("waiting");
  expect((await held.q.getJob(held.jobId))!.attemptsStarted).toBe(0);
}

describe("a worker without a passing isolation report", () => {
  it("regression: leaves a live case queued for another worker (it took it and failed it with a refusal) while it takes replay cases; takes it once a probe passes", async () => {
    const suiteRun = "11111111111111111111";
    const live = await enqueueCase(redis.url, path.join(REPO, "evals/linkcheck-canonical"), { suiteRun, model: "live" });
    const replay = await enqueueCase(redis.url, path.join(REPO, "evals/linkcheck-commands"), { suiteRun });
    const { stateDir, w, queues, close } = await workerFor("worker-l", "node", [live, replay]);
    const [qLive, qReplay] = queues as [Queue, Queue];
    try {
      // the live case is still there for another worker, never started
      await heldWhileOtherRuns({ q: qReplay, jobId: replay.jobId }, { q: qLive, jobId: live.jobId });
      // it says why, once
      await until(
        "the worker says it does not take live cases",
        async () => (w.stderr().includes("not taking live-model cases of node") ? true : null),
        60_000,
      );
      const stopped = w
        .stderr()
        .split("\n")
        .filter((l) => l.includes("not taking live-model cases of node"));
      expect(stopped, w.stderr()).toHaveLength(1);
      expect(stopped[0]).toMatch(/its isolation report on this machine is (none|stale|failed)/);

      // a passing report for node on this worker's daemon, made by the very command the worker printed, run from a
      // shell that has only the README's set-up (no bins on the PATH): it takes the live case (the run itself has no
      // model key here; taken is the observation). Regression: it printed `mini-agent-client probe --family node`,
      // which is not on the PATH and lacked the worker's state dir.
      const printed = /run: (.+)$/.exec(stopped[0]!)?.[1];
      expect(printed, stopped[0]).toContain(`probe --family node --state-dir ${stateDir}`);
      const probe = await shellRun(printed!);
      expect(probe.code, probe.output).toBe(0);
      await until("the live case taken", async () => ((await qLive.getJob(live.jobId))!.attemptsStarted >= 1 ? true : null), 120_000);
      await until("the live case finished", async () => (["completed", "failed"].includes(await qLive.getJobState(live.jobId)) ? true : null));
      expect(w.stderr()).toContain("taking live-model cases of node again: its isolation report passes");
      // live cases have a queue of their own (a worker without a passing report does not poll it)
      expect(live.queue).toBe(`${replay.queue}-live`);
    } finally {
      await close();
    }
    expect(await w.stop("SIGTERM")).toBe(0);
    expect(await containersOf(docker, stateDir)).toEqual([]);
  }, 1_200_000);
});

describe("a worker without a family's image", () => {
  it("regression: leaves that family's replay cases queued (it took them and ended them as image_missing errors) while it runs the families it has; takes them once the image is pinned", async () => {
    const suiteRun = "22222222222222222222";
    const py = await enqueueCase(redis.url, path.join(REPO, "evals/semverlite-canonical"), { suiteRun });
    const node = await enqueueCase(redis.url, path.join(REPO, "evals/linkcheck-final-without-work"), { suiteRun });
    // the base pinned node only: this worker's state dir has no python image
    const { stateDir, w, queues, close } = await workerFor("worker-i", "node,python", [py, node]);
    const [qPy, qNode] = queues as [Queue, Queue];
    try {
      await heldWhileOtherRuns({ q: qNode, jobId: node.jobId }, { q: qPy, jobId: py.jobId });
      const said = w
        .stderr()
        .split("\n")
        .filter((l) => l.includes("not taking cases of python"));
      expect(said, w.stderr()).toHaveLength(1);
      expect(said[0]).toContain(`npm run image:build -- --family python --state-dir ${stateDir}`);

      await pinTestImage(path.join(stateDir, "sandbox-image.lock.json"), "python");
      await until("the python case done", async () => ((await qPy.getJobState(py.jobId)) === "completed" ? true : null));
      expect((await qPy.getJob(py.jobId))!.returnvalue.result.verdict).toBe("passed");
      expect((await qPy.getJob(py.jobId))!.attemptsStarted).toBe(1);
      expect(w.stderr()).toContain("taking cases of python again: it can run here");
    } finally {
      await close();
    }
    expect(await w.stop("SIGTERM")).toBe(0);
    expect(await containersOf(docker, stateDir)).toEqual([]);
  }, 1_200_000);
});

describe("forged jobs on a worker's queue", () => {
  it("regression: a job whose case id steps out of the work dir (it unpacked and ran a case at an absolute path) and a job whose data is not JSON (it stayed active, retried every ~10 s) are failed terminally with the reason; the worker stays up and runs the next case", async () => {
    const caseDir = path.join(REPO, "evals/linkcheck-commands");
    const c = await loadCase(caseDir);
    const p = await packCase(caseDir);
    const target = path.join(base, "escaped-case");
    const q = new Queue(queueFor("runc", "node", "replay"), { connection: connectionOptions(parseQueueUrl(redis.url)) });
    try {
      const forged = {
        schema_version: 1,
        suite_run: "33333333333333333333",
        case_id: `${"../".repeat(12)}${target.slice(1)}`,
        case_hash: c.hash,
        family: "node",
        model: "replay",
        profile: "eval",
        tar_base64: p.tar.toString("base64"),
        tar_sha256: p.sha256,
      };
      await q.add("case", forged, { jobId: "forged-escape", attempts: 3 });
      await q.add("case", { ...forged, case_id: "x" }, { jobId: "forged-not-json", attempts: 3 });
      // what an attacker with the queue's password can store: bytes BullMQ cannot parse
      await redis.cli(["hset", `bull:${q.name}:forged-not-json`, "data", "{not json"]);
      const valid = await enqueueCase(redis.url, caseDir, { suiteRun: "33333333333333333333" });
      const stateDir = workerStateDir(base, "worker-f", imageLock);
      const w = await startWorker({ queue: redis.url, stateDir, id: "worker-f", args: ["--families", "node"] });
      workers.push(w);
      await until("the valid case done", async () => ((await q.getJobState(valid.jobId)) === "completed" ? true : null));
      expect((await q.getJob(valid.jobId))!.returnvalue.result.verdict).toBe("passed");
      for (const id of ["forged-escape", "forged-not-json"])
        await until(`${id} failed`, async () => ((await q.getJobState(id)) === "failed" ? true : null), 60_000);
      // failed once and for all: no second attempt comes, though each job allows three
      await new Promise((r) => setTimeout(r, 3000));
      for (const [id, reason] of [
        ["forged-escape", /^invalid_request: .*case_id/s],
        ["forged-not-json", /^invalid_request: the job's stored data is not JSON/],
      ] as const) {
        expect(await q.getJobState(id), id).toBe("failed");
        const raw = await redis.cli(["hget", `bull:${q.name}:${id}`, "failedReason"]);
        expect(raw.trim(), id).toMatch(reason);
        expect(await redis.cli(["hget", `bull:${q.name}:${id}`, "ats"]), id).toMatch(/^1?\s*$/);
      }
      expect(fs.existsSync(target)).toBe(false);
      expect(w.proc.exitCode).toBeNull();
      expect(await w.stop("SIGTERM")).toBe(0);
      expect(await containersOf(docker, stateDir)).toEqual([]);
    } finally {
      await q.close();
    }
  }, 1_200_000);
});

describe("a worker of a custom image family", () => {
  // a name of this test's own: the image tag it builds (mini-agent/sandbox-NAME:local) is no other test's
  const FAMILY = "fleet-greet";
  const BUGGY = 'export function who() {\n  return "nobody";\n}\n';
  const GREET_TEST =
    'import test from "node:test";\nimport assert from "node:assert/strict";\nimport { execFileSync } from "node:child_process";\nimport { who } from "../src/who.js";\ntest("greets", () => assert.equal(execFileSync("greet", [who()], { encoding: "utf8" }), "hello team\\n"));\n';

  /** a case whose tests pass only where the family's own program `greet` exists */
  function greetCase(dir: string): string {
    const write = (rel: string, text: string) => {
      fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
      fs.writeFileSync(path.join(dir, rel), text);
    };
    write("repo/package.json", '{"type":"module"}\n');
    write("repo/src/who.js", BUGGY);
    write("repo/tests/test_greet.js", GREET_TEST);
    write(
      "task.json",
      JSON.stringify({
        schema_version: 1,
        name: "greet",
        task: "greet the team",
        writable: ["src/**"],
        forbidden: [],
        image_family: FAMILY,
        test_presets: { candidate: { command: ["node", "--test", "--test-reporter=tap"], files: ["tests/*.js"], parser: "node_test", timeout_seconds: 60 } },
        verify_preset: "candidate",
        budgets: { model_turns: 5, tool_calls: 5, total_seconds: 300, per_call_seconds: 120 },
      }),
    );
    const version = crypto.createHash("sha256").update(BUGGY).digest("hex");
    write(
      "replay.json",
      JSON.stringify({
        schema_version: 1,
        decisions: [
          { kind: "tool", call: { call_id: "c1", name: "apply_patch", arguments: { path: "src/who.js", version, old: '"nobody"', new: '"team"' } } },
          { kind: "final", text: "done" },
        ],
      }),
    );
    write("expect.json", JSON.stringify({ schema_version: 1, description: "greets with the custom family's program", status: "completed" }));
    return dir;
  }

  it("regression: --families refused a custom family its image lock pins (only node, python, go), so no fleet took such cases; it takes them from the family's own queue and runs them in that image, and an unknown name exits 64 naming the known ones, starting nothing", async () => {
    const stateDir = workerStateDir(base, "worker-g", imageLock);
    const ctx = path.join(base, "family-greet");
    fs.mkdirSync(ctx, { recursive: true });
    // a program with no shell behind it: the kernel starts node for the #! line
    fs.writeFileSync(path.join(ctx, "greet"), '#!/usr/bin/node\nprocess.stdout.write("hello " + (process.argv[2] ?? "world") + "\\n");\n', { mode: 0o755 });
    fs.writeFileSync(path.join(ctx, "Dockerfile"), "FROM mini-agent/sandbox-node:local\nCOPY greet /usr/local/bin/greet\n");
    // built into this worker's own state dir only
    await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", "sandbox-image/build.ts", "--family", FAMILY, "--dockerfile", path.join(ctx, "Dockerfile"), "--state-dir", stateDir, "--quiet"],
      { cwd: REPO, maxBuffer: 32 << 20 },
    );
    try {
      const refused = await startWorker({ queue: redis.url, stateDir, id: "worker-g0", args: ["--families", `${FAMILY},nosuch`] }).then(
        () => "started",
        (e: Error) => e.message,
      );
      expect(refused).toContain(`exited before ready (exit ${WORKER_EXIT.usage})`);
      expect(refused).toContain(`--families takes a list of node, python, go, ${FAMILY}`);
      expect(refused).toContain("unknown: nosuch");
      // nothing started: no daemon ever opened this state dir
      expect(fs.existsSync(path.join(stateDir, "ledger.sqlite"))).toBe(false);

      const job = await enqueueCase(redis.url, greetCase(path.join(base, "cases", "greet-case")), { suiteRun: "44444444444444444444" });
      expect(job.queue).toBe(queueFor("runc", FAMILY, "replay"));
      // not workerFor: its fresh copy of the base's lock would drop the family built above
      const w = await startWorker({ queue: redis.url, stateDir, id: "worker-g", args: ["--families", FAMILY] });
      workers.push(w);
      const q = new Queue(job.queue, { connection: connectionOptions(parseQueueUrl(redis.url)) });
      try {
        await until("the custom family's case done", async () => ((await q.getJobState(job.jobId)) === "completed" ? true : null));
        const done = (await q.getJob(job.jobId))!.returnvalue as { result: { verdict: string }; worker: { worker_id: string } };
        // passed: its tests ran `greet`, which only the custom family's image has
        expect(done, w.stderr()).toMatchObject({ result: { verdict: "passed" }, worker: { worker_id: "worker-g" } });
        expect(w.stdout()).toContain(`families=${FAMILY}`);
        // the family's own isolation verdict (never probed here), not the default family's, is what the worker reads
        const health = await runClient(["health", "--json", "--state-dir", stateDir]);
        const families = (JSON.parse(health.stdout.slice(health.stdout.indexOf("{"))) as { families?: Record<string, { reason: string | null }> }).families;
        expect(families?.[FAMILY], health.stdout).toMatchObject({ verdict: "none", reason: "no_report" });
      } finally {
        await q.close();
      }
      expect(await w.stop("SIGTERM")).toBe(0);
      expect(await containersOf(docker, stateDir)).toEqual([]);
    } finally {
      await docker
        .getImage(`mini-agent/sandbox-${FAMILY}:local`)
        // forced: after a failure the worker (stopped in afterAll) may still hold a container of it
        .remove({ force: true })
        .catch(() => undefined);
    }
  }, 1_200_000);
});
