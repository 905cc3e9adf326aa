import os from "node:os";
import path from "node:path";
import { parseCli } from "../../daemon/src/config/cli-args.js";
import { instanceIdFor } from "../../daemon/src/config/state-dir.js";
import { IMAGE_FAMILIES } from "../../daemon/src/contracts/sandbox.js";
import type { ImageFamily } from "../../daemon/src/contracts/test-report.js";
import { concurrencyOf, MAX_CONCURRENCY, QUEUE_OPTIONS, queueFlagsOf } from "../../eval/src/index.js";

export const WORKER_USAGE = `usage: mini-agent-worker --queue URL --state-dir DIR [--concurrency N] [--families ${IMAGE_FAMILIES.join(",")},CUSTOM]
                         [--runtime runc|runsc] [--worker-id ID] [--lock-duration-ms MS] [--stalled-interval-ms MS]
  --queue URL        redis://[:PASSWORD@]HOST:PORT/DB or rediss://... (TLS); the password is never printed
  --queue-password-file FILE  the queue's password from FILE (its first line; refused if group or
                     others may read it), with a --queue URL that holds none: a password in
                     --queue is visible to every user of the machine in \`ps\`
  --state-dir DIR    this worker's own daemon state: ledger, image lock, credentials, isolation reports
  --concurrency N    cases this worker runs at once, over all its families, 1..16 (default 1); it takes
                     a case only when it has a free slot, so a queued case waits for any worker's slot
  --families LIST    the image families this worker takes cases of: built-in ones, and custom ones
                     its state dir's image lock pins (npm run image:build -- --family NAME
                     --dockerfile PATH --state-dir DIR); default: all of those. None of a family
                     whose image is not pinned in its state dir; live-model cases of a family only
                     while this machine's isolation report for it is fresh and passing
  --runtime          the container runtime of this worker's sandboxes (default runc)
  --work-dir DIR     where each case is unpacked and run, outside the state dir
                     (default: TMPDIR/mini-agent-worker-<id of the state dir>)
  --worker-id ID     names this worker in results (default: HOSTNAME-PID)
  --lock-duration-ms how long a job's lock lasts without renewal (default 30000); a worker that dies
                     loses its case to another worker once the lock has run out and a stall check runs
  --stalled-interval-ms how often workers look for such cases (default 30000)
Exit codes: 0 stopped by SIGTERM/SIGINT, 1 failure, 64 usage (a bad password file too), 69 the queue
  or the daemon was unavailable, 77 the queue refused the password (queue_auth_failed).`;

export const WORKER_DEFAULTS = { concurrency: 1, lockDurationMs: 30_000, stalledIntervalMs: 30_000, maxConcurrency: MAX_CONCURRENCY } as const;

export interface WorkerOptions {
  queue: string;
  /** --queue-password-file, resolved against cwd (read by worker-main, not here) */
  queuePasswordFile?: string;
  stateDir: string;
  concurrency: number;
  families: ImageFamily[];
  runtime: "runc" | "runsc";
  workerId: string;
  workDir: string;
  lockDurationMs: number;
  stalledIntervalMs: number;
}

export type ParsedWorkerArgs = { kind: "ok"; opts: WorkerOptions } | { kind: "help" } | { kind: "usage_error"; message: string };

const ms = (name: string, v: string | undefined, dflt: number): number | string => {
  if (v === undefined) return dflt;
  const n = Number(v);
  return Number.isInteger(n) && n >= 100 && n <= 3_600_000 ? n : `${name} must be a whole number of milliseconds from 100 to 3600000, not ${v}`;
};

/**
 * The families a worker on a state dir may serve: the built-in ones and the custom ones its image
 * lock pins (the daemon's knownFamiliesAt, passed in so parsing reads no file itself).
 */
export type KnownFamilies = (stateDir: string) => readonly string[];

/** Strict: an unknown option or a bad value is a usage error that starts nothing. */
export function parseWorkerArgs(argv: string[], cwd: string, pid: number, knownFamilies: KnownFamilies = () => IMAGE_FAMILIES): ParsedWorkerArgs {
  const parsed = parseCli(
    argv,
    {
      ...QUEUE_OPTIONS,
      "state-dir": { type: "string" },
      concurrency: { type: "string" },
      families: { type: "string" },
      runtime: { type: "string" },
      "worker-id": { type: "string" },
      "work-dir": { type: "string" },
      "lock-duration-ms": { type: "string" },
      "stalled-interval-ms": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    false,
  );
  if (!parsed.ok) return { kind: "usage_error", message: parsed.message };
  const v = parsed.values;
  if (v.help) return { kind: "help" };
  if (!v.queue) return { kind: "usage_error", message: "--queue URL is required" };
  if (!v["state-dir"]) return { kind: "usage_error", message: "--state-dir DIR is required (each worker keeps its own)" };
  const concurrency = concurrencyOf(v.concurrency);
  if (!concurrency.ok) return { kind: "usage_error", message: concurrency.message };
  const queue = queueFlagsOf(v, cwd);
  if (!queue.ok) return { kind: "usage_error", message: queue.message };
  // a custom family is known only from the lock of the state dir this worker's daemon will use
  const known = knownFamilies(path.resolve(cwd, v["state-dir"]));
  const families = (v.families ?? known.join(",")).split(",").map((f) => f.trim());
  const unknown = families.filter((f) => !known.includes(f));
  if (unknown.length > 0 || families.length === 0)
    return {
      kind: "usage_error",
      message: `--families takes a list of ${known.join(", ")} (the built-in families and the custom ones this state dir's image lock pins); unknown: ${unknown.join(", ") || "(empty)"}`,
    };
  const runtime = v.runtime ?? "runc";
  if (runtime !== "runc" && runtime !== "runsc") return { kind: "usage_error", message: `--runtime must be runc or runsc, not ${runtime}` };
  const workerId = v["worker-id"] ?? `${os.hostname()}-${pid}`;
  if (!/^[A-Za-z0-9._-]{1,128}$/.test(workerId)) return { kind: "usage_error", message: "--worker-id takes 1..128 of A-Z a-z 0-9 . _ -" };
  const lock = ms("--lock-duration-ms", v["lock-duration-ms"], WORKER_DEFAULTS.lockDurationMs);
  if (typeof lock === "string") return { kind: "usage_error", message: lock };
  const stalled = ms("--stalled-interval-ms", v["stalled-interval-ms"], WORKER_DEFAULTS.stalledIntervalMs);
  if (typeof stalled === "string") return { kind: "usage_error", message: stalled };
  return {
    kind: "ok",
    opts: {
      queue: v.queue,
      ...(queue.passwordFile !== undefined && { queuePasswordFile: queue.passwordFile }),
      stateDir: path.resolve(cwd, v["state-dir"]),
      concurrency: concurrency.value,
      families: [...new Set(families)] as ImageFamily[],
      runtime,
      workerId,
      workDir: v["work-dir"]
        ? path.resolve(cwd, v["work-dir"])
        : path.join(os.tmpdir(), `mini-agent-worker-${instanceIdFor(path.resolve(cwd, v["state-dir"]))}`),
      lockDurationMs: lock,
      stalledIntervalMs: stalled,
    },
  };
}
