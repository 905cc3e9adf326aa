import { type ChildProcess, execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Queue } from "bullmq";
import { binArgs } from "./bins.js";
import { instanceIdFor } from "../daemon/src/config/state-dir.js";
import { taskImageFamily } from "../daemon/src/contracts/task-spec.js";
import type { createDockerClient } from "../daemon/src/sandbox/docker-client.js";
import { INSTANCE_LABEL, labelFilter } from "../daemon/src/sandbox/labels.js";
import { loadCase } from "../eval/src/case-load.js";
import { packCase } from "../eval/src/fleet/case-payload.js";
import { jobIdOf, queueFor } from "../eval/src/fleet/queue-names.js";
import { connectionOptions, parseQueueUrl } from "../eval/src/fleet/queue-url.js";
import { noteTestInstance } from "./test-instances.js";

/**
 * Real processes for eval fleets: a Redis from scripts/redis-ensure.sh on a
 * free 127.0.0.1 port with a fresh password, and mini-agent-worker processes
 * spawned as users start them (the built bins under the test command, else from
 * source through tsx: scripts/bins.ts). Used by tests/fleet
 * and scripts/bench-fleet.ts; it lives here, not under tests/, so the bench
 * (compiled with the scripts) pulls no test file into dist/.
 */
const run = promisify(execFile);
export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** an environment without the caller's credentials or state settings (the canary is added on purpose by the caller) */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const k of ["PATH", "HOME", "LANG", "TZ", "DOCKER_HOST", "TMPDIR"]) if (process.env[k] !== undefined) env[k] = process.env[k];
  return { ...env, NO_COLOR: "1", ...extra };
}

/** The client as a user runs it: its exit code (-1 when a signal ended it) and output. */
export async function runClient(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const r = await startClient(args, env).done;
  return { ...r, code: typeof r.code === "number" ? r.code : -1 };
}

export async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise((r) => srv.close(r));
  return port;
}

export interface RedisHandle {
  port: number;
  password: string;
  dir: string;
  /** the URL with the password: for handles in the test's own process only, never a command line (it shows in ps) */
  url: string;
  /** the URL without the password, for --queue beside --queue-password-file */
  queueUrl: string;
  /** a mode-600 file holding the password (what --queue-password-file takes) */
  passwordFile: string;
  /** `--queue URL --queue-password-file FILE`: how our own tests and the bench name the queue on a command line */
  queueArgs: string[];
  pid(): number;
  stop(): Promise<void>;
  /** redis-cli with the password from the environment (never on its command line) */
  cli(args: string[]): Promise<string>;
}

export async function startRedis(dir: string): Promise<RedisHandle> {
  const port = await freePort();
  const password = randomBytes(18).toString("hex");
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  await run("bash", [path.join(REPO, "scripts/redis-ensure.sh"), String(port), dir], { env: { ...cleanEnv(), REDIS_PASSWORD: password }, timeout: 600_000 });
  const passwordFile = path.join(dir, "queue-password");
  fs.writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
  const queueUrl = `redis://127.0.0.1:${port}/0`;
  const pid = () => Number(fs.readFileSync(path.join(dir, "redis.pid"), "utf8").trim());
  const cli = async (args: string[]) =>
    (
      await run("redis-cli", ["-h", "127.0.0.1", "-p", String(port), ...args], {
        env: { ...cleanEnv(), REDISCLI_AUTH: password },
        maxBuffer: 256 * 1024 * 1024,
      })
    ).stdout;
  return {
    port,
    password,
    dir,
    url: `redis://:${password}@127.0.0.1:${port}/0`,
    queueUrl,
    passwordFile,
    queueArgs: ["--queue", queueUrl, "--queue-password-file", passwordFile],
    pid,
    cli,
    async stop() {
      let p: number;
      try {
        p = pid();
      } catch {
        return;
      }
      try {
        process.kill(p, "SIGTERM");
      } catch {
        return;
      }
      for (let i = 0; i < 100; i++) {
        try {
          process.kill(p, 0);
        } catch {
          return;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      process.kill(p, "SIGKILL");
    },
  };
}

/** Every command Redis receives, with its arguments, while it runs (MONITOR): the canary test reads it all. */
export function monitorRedis(r: RedisHandle): { text(): string; stop(): void } {
  const proc = spawn("redis-cli", ["-h", "127.0.0.1", "-p", String(r.port), "monitor"], {
    env: { ...cleanEnv(), REDISCLI_AUTH: r.password },
    stdio: ["ignore", "pipe", "ignore"],
  });
  let out = "";
  proc.stdout.on("data", (d: Buffer) => (out += d.toString()));
  return { text: () => out, stop: () => proc.kill("SIGTERM") };
}

export interface WorkerHandle {
  id: string;
  stateDir: string;
  proc: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | string>;
  stop(signal?: NodeJS.Signals): Promise<number | string>;
}

export async function startWorker(opts: {
  queue: string;
  /** --queue-password-file: the password never on the worker's command line */
  passwordFile?: string;
  stateDir: string;
  id: string;
  args?: string[];
  env?: Record<string, string>;
  readyTimeoutMs?: number;
}): Promise<WorkerHandle> {
  const args = [
    ...binArgs("worker"),
    "--queue",
    opts.queue,
    ...(opts.passwordFile === undefined ? [] : ["--queue-password-file", opts.passwordFile]),
    "--state-dir",
    opts.stateDir,
    "--worker-id",
    opts.id,
    ...(opts.args ?? []),
  ];
  noteTestInstance(opts.stateDir);
  const proc = spawn(process.execPath, args, { cwd: REPO, env: cleanEnv(opts.env), stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  proc.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  proc.stderr!.on("data", (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | string>((resolve) => proc.on("exit", (code, signal) => resolve(code ?? signal ?? -1)));
  const h: WorkerHandle = {
    id: opts.id,
    stateDir: opts.stateDir,
    proc,
    stdout: () => out,
    stderr: () => err,
    exited,
    async stop(signal = "SIGTERM") {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      return exited;
    },
  };
  const deadline = Date.now() + (opts.readyTimeoutMs ?? 180_000);
  while (!/mini-agent-worker ready /.test(out)) {
    if (proc.exitCode !== null || proc.signalCode !== null)
      throw new Error(`worker ${opts.id} exited before ready (exit ${proc.exitCode ?? proc.signalCode}):\n${out}\n${err}`);
    if (Date.now() > deadline) {
      proc.kill("SIGKILL");
      throw new Error(`worker ${opts.id} not ready in time:\n${out}\n${err}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return h;
}

/** The containers a worker's daemon made (its instance label), running or not. */
export async function containersOf(docker: ReturnType<typeof createDockerClient>, stateDir: string) {
  return docker.listContainers({ all: true, filters: { label: [labelFilter(INSTANCE_LABEL, instanceIdFor(stateDir))] } });
}

/** A worker state dir with the test's image lock in it (each worker keeps its own). */
export function workerStateDir(base: string, name: string, imageLock: string): string {
  const d = path.join(base, name);
  fs.mkdirSync(d, { recursive: true, mode: 0o700 });
  fs.copyFileSync(imageLock, path.join(d, "sandbox-image.lock.json"));
  return d;
}

export interface ClientHandle {
  proc: ChildProcess;
  stdout(): string;
  stderr(): string;
  done: Promise<{ code: number | string; stdout: string; stderr: string }>;
}

/** The client as a user starts it in a terminal, still running: the caller may signal it (Ctrl-C is SIGINT). */
export function startClient(args: string[], env: Record<string, string> = {}): ClientHandle {
  const proc = spawn(process.execPath, [...binArgs("client"), ...args], {
    cwd: REPO,
    env: cleanEnv(env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  proc.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
  proc.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<{ code: number | string; stdout: string; stderr: string }>((resolve) =>
    proc.on("exit", (c, s) => resolve({ code: c ?? s ?? -1, stdout, stderr })),
  );
  return { proc, stdout: () => stdout, stderr: () => stderr, done };
}

/**
 * One case put on the queue as `eval run --queue` puts it (same payload, queue
 * and job options), for tests that watch the workers without a runner.
 * Returns the job's queue name and id.
 */
export async function enqueueCase(
  queueUrl: string,
  caseDir: string,
  opts: { suiteRun: string; model?: "replay" | "live"; runtime?: "runc" | "runsc" },
): Promise<{ queue: string; jobId: string; caseId: string }> {
  const c = await loadCase(caseDir);
  const p = await packCase(c.dir);
  const model = opts.model ?? "replay";
  const family = taskImageFamily(c.task);
  const name = queueFor(opts.runtime ?? "runc", family, model);
  const q = new Queue(name, { connection: connectionOptions(parseQueueUrl(queueUrl)) });
  try {
    const jobId = jobIdOf(opts.suiteRun, c.id, c.hash);
    await q.add(
      "case",
      {
        schema_version: 1,
        suite_run: opts.suiteRun,
        case_id: c.id,
        case_hash: c.hash,
        family,
        model,
        profile: "eval",
        tar_base64: p.tar.toString("base64"),
        tar_sha256: p.sha256,
      },
      { jobId, attempts: 1, removeOnComplete: false, removeOnFail: false },
    );
    return { queue: name, jobId, caseId: c.id };
  } finally {
    await q.close();
  }
}

/** Stops Redis the way a graceful restart does: it writes its snapshot (dump.rdb in its dir) first, so the queue survives. */
export async function stopRedisSaving(r: RedisHandle): Promise<void> {
  const pid = r.pid();
  await r.cli(["shutdown", "save"]).catch(() => undefined);
  for (let i = 0; i < 200; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error(`redis ${pid} did not stop`);
}

/** Starts the same Redis again (same port, password, dir and config); it loads its snapshot. */
export async function restartRedis(r: RedisHandle): Promise<void> {
  await run("redis-server", [path.join(r.dir, "redis.conf")], { env: cleanEnv() });
  for (let i = 0; i < 100; i++) {
    if ((await r.cli(["ping"]).catch(() => "")).includes("PONG")) return;
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error(`redis on ${r.port} did not come back`);
}
