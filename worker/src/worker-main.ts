import fs from "node:fs";
import { type QueueTarget, resolveQueueTarget } from "../../eval/src/index.js";
import { usageErrorText } from "../../daemon/src/config/cli-args.js";
import { isMiniAgentError } from "../../daemon/src/errors.js";
import { statePath } from "../../daemon/src/config/state-dir.js";
import { main as daemonMain, knownFamiliesAt, type MainDeps, type ReadyInfo } from "../../daemon/src/main.js";
import { parseWorkerArgs, WORKER_USAGE } from "./worker-args.js";
import { startWorker } from "./worker.js";

/** Exit codes of mini-agent-worker, set in this one place (documented in --help). */
export const WORKER_EXIT = { ok: 0, failure: 1, usage: 64, unavailable: 69, authFailed: 77 } as const;

export interface WorkerMainDeps extends Pick<MainDeps, "env" | "cwd" | "pid" | "version" | "createServices"> {
  out(line: string): void;
  err(line: string): void;
  now(): number;
  /** registers the stop trigger (SIGTERM/SIGINT for the real process); returns an unregister function */
  onShutdownSignal(handler: (signal: string) => void): () => void;
  /** mini-agent-client as the user can run it (the printed probe commands start with it); default: the bin's name */
  clientProgram?: string;
  /** mini-agent-worker as the user can run it (for `--help` in a usage error); default: the bin's name */
  program?: string;
}

/**
 * mini-agent-worker: a daemon of its own (its state dir, lock, ledger,
 * credentials, isolation reports; the same wiring as mini-agent-daemon) plus
 * the queue side. A bin of its own rather than a daemon flag: the daemon's
 * grammar and lifecycle stay what they are, and a worker can never be
 * reached through a socket someone else started.
 */
export async function workerMain(argv: string[], deps: WorkerMainDeps): Promise<number> {
  const parsed = parseWorkerArgs(argv, deps.cwd, deps.pid, (stateDir) => knownFamiliesAt(statePath(stateDir, "imageLock")));
  if (parsed.kind === "help") {
    deps.out(WORKER_USAGE);
    return WORKER_EXIT.ok;
  }
  if (parsed.kind === "usage_error") {
    deps.err(usageErrorText("mini-agent-worker", parsed.message, `${deps.program ?? "mini-agent-worker"} --help`).trimEnd());
    return WORKER_EXIT.usage;
  }
  const opts = parsed.opts;
  let queue: QueueTarget;
  try {
    queue = resolveQueueTarget(opts.queue, opts.queuePasswordFile);
  } catch (err) {
    deps.err(`mini-agent-worker: ${isMiniAgentError(err) ? `${err.code}: ${err.message}` : "bad --queue"}`);
    return WORKER_EXIT.usage;
  }

  let stopDaemon: ((signal: string) => void) | null = null;
  let onReady!: (info: ReadyInfo) => void;
  const ready = new Promise<ReadyInfo>((resolve) => (onReady = resolve));
  const daemonDone = daemonMain(["--state-dir", opts.stateDir, "--runtime", opts.runtime], {
    env: deps.env,
    cwd: deps.cwd,
    pid: deps.pid,
    version: deps.version,
    out: (line) => deps.err(line),
    err: (line) => deps.err(line),
    createServices: deps.createServices,
    onShutdownSignal: (handler) => {
      stopDaemon = handler;
      return () => {
        stopDaemon = null;
      };
    },
    onReady,
  });
  const started = await Promise.race([ready, daemonDone]);
  if (typeof started === "number") {
    deps.err(`mini-agent-worker: its daemon did not start (exit ${started}); nothing was taken from the queue`);
    return started === 64 ? WORKER_EXIT.usage : WORKER_EXIT.failure;
  }

  // what a killed worker left of its cases (its daemon holds the state dir's lock now, so no other worker uses this folder)
  fs.rmSync(opts.workDir, { recursive: true, force: true });
  fs.mkdirSync(opts.workDir, { recursive: true, mode: 0o700 });

  let stopRequested!: (s: string) => void;
  const stop = new Promise<string>((resolve) => (stopRequested = resolve));
  const off = deps.onShutdownSignal((s) => stopRequested(s));
  const stopTheDaemon = async () => {
    (stopDaemon as ((s: string) => void) | null)?.("SIGTERM");
    return daemonDone;
  };
  let worker;
  try {
    worker = await startWorker(opts, {
      socketPath: started.socketPath,
      stateDir: opts.stateDir,
      queue,
      now: deps.now,
      onError: (m) => deps.err(`mini-agent-worker: ${m}`),
      onNotice: (m) => deps.err(`mini-agent-worker: ${m}`),
      clientProgram: deps.clientProgram ?? "mini-agent-client",
    });
  } catch (err) {
    off();
    deps.err(`mini-agent-worker: ${isMiniAgentError(err) ? `${err.code}: ${err.message}` : `start-up failed: ${(err as Error)?.message}`}`);
    await stopTheDaemon();
    if (isMiniAgentError(err, "queue_auth_failed")) return WORKER_EXIT.authFailed;
    return isMiniAgentError(err, "queue_unreachable") ? WORKER_EXIT.unavailable : WORKER_EXIT.failure;
  }
  const id = await worker.identity();
  deps.out(
    `mini-agent-worker ready worker=${id.worker_id} pid=${deps.pid} queue=${queue.display} runtime=${opts.runtime} families=${opts.families.join(",")} concurrency=${opts.concurrency}`,
  );
  await stop;
  off();
  await worker.close();
  const code = await stopTheDaemon();
  fs.rmSync(opts.workDir, { recursive: true, force: true });
  return code === 0 ? WORKER_EXIT.ok : WORKER_EXIT.failure;
}
