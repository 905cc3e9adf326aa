/**
 * The few plain Redis commands a fleet uses beside BullMQ (the start-up ping,
 * the cancel key, the test's key scan). BullMQ's own handle (`queue.client`) is
 * an ioredis client; it is typed narrowly in BullMQ, so it is seen through
 * this interface instead of a second Redis library.
 */
export interface RedisLike {
  ping(): Promise<string>;
  exists(key: string): Promise<number>;
  set(key: string, value: string, ex: "EX", seconds: number): Promise<unknown>;
}

export async function redisOf(queue: { client: Promise<unknown> }): Promise<RedisLike> {
  return (await queue.client) as RedisLike;
}

const CLOSE_WAIT_MS = 3000;

/**
 * Closes BullMQ handles without hanging: a handle whose Redis never answered
 * (a closed port) retries forever by design, and its graceful close waits for
 * that; after CLOSE_WAIT_MS its connection is dropped instead.
 *
 * BullMQ (5.81) removes every listener of a handle's connection in close()
 * and, for a handle that never connected, then re-emits the pending connect's
 * failure on that connection once its socket ends (an I/O event, so after
 * close() returned): with no listener, a refused password became an uncaught
 * 'error' that killed the process with a stack. A no-op listener goes back on
 * right after close(); the connection is BullMQ's own field, hence the guard.
 */
export async function closeAll(handles: ReadonlyArray<{ close(): Promise<void>; disconnect(): Promise<void> }>): Promise<void> {
  const quiet = (h: object) => {
    const conn = (h as { connection?: { on?: (e: "error", l: () => void) => unknown } }).connection;
    if (typeof conn?.on === "function") conn.on("error", () => undefined);
  };
  await Promise.allSettled(
    handles.map(async (h) => {
      let timer: NodeJS.Timeout | undefined;
      const closed = await Promise.race([
        h.close().then(
          () => {
            quiet(h);
            return true;
          },
          () => {
            quiet(h);
            return true;
          },
        ),
        new Promise<boolean>((r) => {
          timer = setTimeout(() => r(false), CLOSE_WAIT_MS);
        }),
      ]);
      clearTimeout(timer);
      if (!closed) await h.disconnect().catch(() => undefined);
    }),
  );
}
