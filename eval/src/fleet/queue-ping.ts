import { MiniAgentError } from "../../../daemon/src/errors.js";

const PING_TIMEOUT_MS = 10_000;

/** Where a BullMQ handle reports its connection's errors (a Queue or Worker is one). */
export interface ErrorSource {
  on(event: "error", listener: (err: Error) => void): unknown;
  off(event: "error", listener: (err: Error) => void): unknown;
}

/**
 * Redis' own error codes for a refused login: the first word of its error
 * reply (WRONGPASS: a wrong password; NOAUTH: it wants one and none was
 * given; "ERR invalid password" from Redis before 6). The first word is the
 * protocol's stable code, not prose, so matching it is matching a code.
 */
export function isAuthRefusal(err: unknown): boolean {
  const m = String((err as Error | undefined)?.message ?? "");
  return /^(WRONGPASS|NOAUTH)\b/.test(m) || /^ERR invalid password\b/.test(m);
}

/**
 * Redis answers PONG within PING_TIMEOUT_MS, or a typed error naming the
 * redacted URL. BullMQ's connections retry forever by design (a Redis restart
 * mid-suite must not end anything), and that includes a refused password: its
 * handle never resolves, it only reports each refusal as an `error` event.
 * So the first refusal seen on `errors` ends the wait at once with
 * queue_auth_failed; a closed port (no refusal, only silence) waits out the
 * timeout and is queue_unreachable. This is the one place that says either at
 * start.
 */
export async function pingQueue(
  client: Promise<{ ping(): Promise<string> }> | { ping(): Promise<string> },
  display: string,
  timeoutMs = PING_TIMEOUT_MS,
  errors?: ErrorSource,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  let onError: ((err: Error) => void) | undefined;
  try {
    await Promise.race([
      // BullMQ's handle resolves only once connected: the wait for it is inside the timeout too
      Promise.resolve(client).then((c) => c.ping()),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error("no answer")), timeoutMs);
      }),
      new Promise((_, reject) => {
        onError = (err) => {
          if (isAuthRefusal(err)) reject(err);
        };
        errors?.on("error", onError);
      }),
    ]);
  } catch (err) {
    if (isAuthRefusal(err))
      throw new MiniAgentError(
        "queue_auth_failed",
        `Redis at ${display} refused the password (${/^NOAUTH/.test(String((err as Error).message)) ? "it requires one and none was given" : "wrong password"}); check --queue-password-file or the password in --queue`,
      );
    throw new MiniAgentError(
      "queue_unreachable",
      `no Redis answers at ${display} (no answer within ${timeoutMs / 1000} s); start one (scripts/redis-ensure.sh) or check --queue`,
    );
  } finally {
    clearTimeout(timer);
    if (onError) errors?.off("error", onError);
  }
}
