import path from "node:path";

/**
 * The fleet's command-line flags, one home for `eval run`, `eval cancel` and
 * mini-agent-worker: the same names, range and refusals on the producer and
 * the consumer side. No queue code is loaded from here (no BullMQ), so the
 * client's argument parsing stays light.
 */
export const QUEUE_OPTIONS = { queue: { type: "string" }, "queue-password-file": { type: "string" } } as const;

/** how many cases one `eval run` or one worker runs at once, at most */
export const MAX_CONCURRENCY = 16;

/** `--concurrency N`: a whole number from 1 to MAX_CONCURRENCY (absent: 1), or the usage message refusing it. */
export function concurrencyOf(given: string | undefined): { ok: true; value: number } | { ok: false; message: string } {
  const n = given === undefined ? 1 : Number(given);
  if (!Number.isInteger(n) || n < 1 || n > MAX_CONCURRENCY)
    return { ok: false, message: `--concurrency must be a whole number from 1 to ${MAX_CONCURRENCY}, not ${given}` };
  return { ok: true, value: n };
}

/** `--queue URL [--queue-password-file FILE]`: the file resolved against cwd, and only beside a --queue. */
export function queueFlagsOf(
  v: { queue?: string | undefined; "queue-password-file"?: string | undefined },
  cwd: string,
): { ok: true; queue: string | undefined; passwordFile: string | undefined } | { ok: false; message: string } {
  const file = v["queue-password-file"];
  if (file !== undefined && v.queue === undefined) return { ok: false, message: "--queue-password-file FILE goes with --queue redis://HOST:PORT/DB" };
  return { ok: true, queue: v.queue, passwordFile: file === undefined ? undefined : path.resolve(cwd, file) };
}
