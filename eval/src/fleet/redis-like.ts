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
 */
export async function closeAll(handles: ReadonlyArray<{ close(): Promise<void>; disconnect(): Promise<void> }>): Promise<void> {
  await Promise.allSettled(
    handles.map(async (h) => {
      let timer: NodeJS.Timeout | undefined;
      const closed = await Promise.race([
        h.close().then(
          () => true,
          () => true,
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
