import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFleetBase, stopFleetBase } from "./fleet-base.js";
import { EXIT } from "../../client-lib/index.js";
import { EvalReport } from "../../daemon/src/contracts/eval-report.js";
import { createDockerClient } from "../../daemon/src/sandbox/docker-client.js";
import { WORKER_EXIT } from "../../worker/src/worker-main.js";
import {
  containersOf,
  freePort,
  type RedisHandle,
  REPO,
  runClient,
  startClient,
  startWorker,
  type WorkerHandle,
  workerStateDir,
} from "../../scripts/fleet-kit.js";

/**
 * The queue's password (issue 15), with a real Redis that requires one:
 * given by --queue-password-file it never shows in a process's command line;
 * a wrong one, or none, says the password was refused (queue_auth_failed)
 * instead of "no answer"; a closed port still says no answer. No output
 * ever holds the password text.
 */
const docker = createDockerClient(process.env);
const CASE = path.join(REPO, "evals/linkcheck-canonical");
let base: string;
let redis: RedisHandle;
let imageLock: string;
let wrongFile: string;
const WRONG = "wrong-pw-canary-93e1";
const workers: WorkerHandle[] = [];

beforeAll(async () => {
  ({ base, imageLock, redis } = await startFleetBase("ma-fleet-auth-", ["node"]));
  wrongFile = path.join(base, "wrong-password");
  fs.writeFileSync(wrongFile, `${WRONG}\n`, { mode: 0o600 });
}, 900_000);

afterAll(() => stopFleetBase(workers, { base, redis }), 120_000);

const cmdlineOf = (pid: number) => fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ");

function expectNoPassword(text: string): void {
  expect(text).not.toContain(redis.password);
  expect(text).not.toContain(WRONG);
}

describe("the queue's password", () => {
  it("a worker and a runner started with --queue-password-file run a case; the password is in neither's /proc/PID/cmdline", async () => {
    const w = await startWorker({
      queue: redis.queueUrl,
      passwordFile: redis.passwordFile,
      stateDir: workerStateDir(base, "worker-pw", imageLock),
      id: "worker-pw",
      args: ["--families", "node"],
    });
    workers.push(w);
    const workerCmd = cmdlineOf(w.proc.pid!);
    expect(workerCmd).toContain(`--queue-password-file ${redis.passwordFile}`);
    expectNoPassword(workerCmd);
    expect(w.stdout()).toContain(`queue=redis://***@127.0.0.1:${redis.port}/0`);

    const out = path.join(base, "out-pw");
    const runner = startClient(["eval", "run", CASE, "--output", out, ...redis.queueArgs]);
    const runnerCmd = cmdlineOf(runner.proc.pid!);
    expect(runnerCmd).toContain(`--queue-password-file ${redis.passwordFile}`);
    expectNoPassword(runnerCmd);
    const res = await runner.done;
    expect({ code: res.code, stderr: res.stderr }).toEqual({ code: EXIT.ok, stderr: "" });
    const report = EvalReport.parse(JSON.parse(fs.readFileSync(path.join(out, "eval-report.json"), "utf8")));
    expect(report.cases.map((c) => [c.id, c.verdict, c.workers?.map((x) => x.worker_id)])).toEqual([["linkcheck-canonical", "passed", ["worker-pw"]]]);
    expectNoPassword(fs.readFileSync(path.join(out, "fleet.json"), "utf8"));
    expectNoPassword(res.stdout);
    await w.stop("SIGTERM");
    expect(await containersOf(docker, w.stateDir)).toEqual([]);
    expectNoPassword(w.stdout() + w.stderr());
  }, 900_000);

  it("regression: a wrong password says the password was refused (queue_auth_failed, exit 2), not 'no answer', and changes nothing", async () => {
    const out = path.join(base, "out-wrong");
    const res = await runClient(["eval", "run", CASE, "--output", out, "--queue", redis.queueUrl, "--queue-password-file", wrongFile]);
    expect(res.code).toBe(EXIT.unavailable);
    expect(res.stderr).toBe(
      `mini-agent-client eval: queue_auth_failed: Redis at redis://***@127.0.0.1:${redis.port}/0 refused the password (wrong password); check --queue-password-file or the password in --queue\n`,
    );
    expectNoPassword(res.stdout + res.stderr);
    expect(fs.existsSync(out)).toBe(false);
  }, 120_000);

  it("regression: no password for a Redis that requires one (NOAUTH) is the same error, saying none was given", async () => {
    const res = await runClient(["eval", "run", CASE, "--output", path.join(base, "out-none"), "--queue", redis.queueUrl]);
    expect(res.code).toBe(EXIT.unavailable);
    expect(res.stderr).toContain(`queue_auth_failed: Redis at redis://127.0.0.1:${redis.port}/0 refused the password (it requires one and none was given)`);
    expectNoPassword(res.stdout + res.stderr);
  }, 120_000);

  it("a worker given a wrong password exits 77 with queue_auth_failed; eval cancel says the same", async () => {
    const stateDir = workerStateDir(base, "worker-wrong", imageLock);
    const err = await startWorker({ queue: redis.queueUrl, passwordFile: wrongFile, stateDir, id: "worker-wrong" }).then(
      () => "started",
      (e: Error) => e.message,
    );
    expect(err).toContain(`exited before ready (exit ${WORKER_EXIT.authFailed})`);
    expect(err).toContain(`queue_auth_failed: Redis at redis://***@127.0.0.1:${redis.port}/0 refused the password (wrong password)`);
    expectNoPassword(err);
    expect(await containersOf(docker, stateDir)).toEqual([]);

    const out = path.join(base, "out-pw");
    const cancel = await runClient(["eval", "cancel", "--queue", redis.queueUrl, "--queue-password-file", wrongFile, "--output", out]);
    expect(cancel.code).toBe(EXIT.unavailable);
    expect(cancel.stderr).toContain("queue_auth_failed");
    expectNoPassword(cancel.stdout + cancel.stderr);
  }, 300_000);

  it("a closed port still says no answer (queue_unreachable)", async () => {
    const port = await freePort();
    const file = path.join(base, "pw2");
    fs.writeFileSync(file, "x\n", { mode: 0o600 });
    const res = await runClient([
      "eval",
      "run",
      CASE,
      "--output",
      path.join(base, "out-closed"),
      "--queue",
      `redis://127.0.0.1:${port}/0`,
      "--queue-password-file",
      file,
    ]);
    expect(res.code).toBe(EXIT.unavailable);
    expect(res.stderr).toContain(`queue_unreachable: no Redis answers at redis://***@127.0.0.1:${port}/0 (no answer within 10 s)`);
  }, 120_000);

  it("a password file readable by others, or a password in both places, is a usage error (64) that starts nothing", async () => {
    const loose = path.join(base, "loose");
    fs.writeFileSync(loose, `${redis.password}\n`, { mode: 0o644 });
    fs.chmodSync(loose, 0o644);
    const a = await runClient(["eval", "run", CASE, "--output", path.join(base, "out-loose"), "--queue", redis.queueUrl, "--queue-password-file", loose]);
    expect(a.code).toBe(EXIT.usage);
    expect(a.stderr).toContain(`queue_password_file_invalid: --queue-password-file ${loose}: its permissions 0644 are too open`);
    expectNoPassword(a.stderr);
    const b = await runClient([
      "eval",
      "run",
      CASE,
      "--output",
      path.join(base, "out-both"),
      "--queue",
      redis.url,
      "--queue-password-file",
      redis.passwordFile,
    ]);
    expect(b.code).toBe(EXIT.usage);
    expect(b.stderr).toContain("holds a password and --queue-password-file gives one too");
    expectNoPassword(b.stderr);
    const stateDir = workerStateDir(base, "worker-loose", imageLock);
    const w = await startWorker({ queue: redis.queueUrl, passwordFile: loose, stateDir, id: "worker-loose" }).then(
      () => "started",
      (e: Error) => e.message,
    );
    expect(w).toContain(`exited before ready (exit ${WORKER_EXIT.usage})`);
    expect(w).toContain("queue_password_file_invalid");
  }, 300_000);
});
