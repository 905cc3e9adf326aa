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
