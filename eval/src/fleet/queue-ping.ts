import { MiniAgentError } from "../../../daemon/src/errors.js";

const PING_TIMEOUT_MS = 10_000;

/**
 * Redis answers PONG within PING_TIMEOUT_MS, or queue_unreachable naming the
 * redacted URL (a closed port, a wrong password). BullMQ's connections retry
 * forever by design (a Redis restart mid-suite must not end anything); this is
 * the one place that says "nobody is there" at start.
 */
export async function pingQueue(
  client: Promise<{ ping(): Promise<string> }> | { ping(): Promise<string> },
  display: string,
  timeoutMs = PING_TIMEOUT_MS,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      // BullMQ's handle resolves only once connected: the wait for it is inside the timeout too
      Promise.resolve(client).then((c) => c.ping()),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error("no answer")), timeoutMs);
      }),
    ]);
  } catch (err) {
    const why = /WRONGPASS|NOAUTH|invalid password/i.test(String((err as Error)?.message)) ? "the password was refused" : "no answer";
    throw new MiniAgentError("queue_unreachable", `no Redis answers at ${display} (${why}); start one (scripts/redis-ensure.sh) or check --queue`);
  } finally {
    clearTimeout(timer);
  }
}
