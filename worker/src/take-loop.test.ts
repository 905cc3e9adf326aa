import { describe, expect, it } from "vitest";
import { type Source, startTakeLoop } from "./take-loop.js";

/** Sources over in-memory job lists; each job is "run" until the test releases it. */
function fixture(lists: Record<string, number[]>, slots: number) {
  const taken: string[] = [];
  const release: Array<() => void> = [];
  let most = 0;
  let now = 0;
  const sources: Source<string>[] = Object.entries(lists).map(([name, jobs]) => ({
    name,
    take: async () => {
      const j = jobs.shift();
      return j === undefined ? undefined : `${name}${j}`;
    },
  }));
  const loop = startTakeLoop<string>({
    slots,
    sources,
    mayTake: async () => true,
    run: async (job) => {
      taken.push(job);
      now++;
      most = Math.max(most, now);
      await new Promise<void>((r) => release.push(r));
      now--;
    },
    idleMs: 1,
    sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
    onError: () => undefined,
  });
  return { loop, taken, release, most: () => most };
}

const settle = () => new Promise((r) => setTimeout(r, 20));
/** waits (without a time assertion) until cond holds, then a little longer so an extra take would show */
async function until(cond: () => boolean) {
  for (let i = 0; i < 1000 && !cond(); i++) await settle();
  await settle();
}

describe("take loop", () => {
  it("regression: one slot over three queues takes one job, not one per queue, and takes the next only when it ends", async () => {
    const f = fixture({ a: [1, 2], b: [1], c: [1] }, 1);
    await until(() => f.taken.length >= 1);
    expect(f.taken).toEqual(["a1"]);
    f.release.shift()!();
    await until(() => f.taken.length >= 2);
    // round-robin: after a, b's turn
    expect(f.taken).toEqual(["a1", "b1"]);
    f.release.shift()!();
    await until(() => f.taken.length >= 3);
    f.release.shift()!();
    await until(() => f.taken.length >= 4);
    f.release.shift()!();
    await settle();
    expect(f.taken).toEqual(["a1", "b1", "c1", "a2"]);
    expect(f.most()).toBe(1);
    await f.loop.stop();
  });

  it("two slots run two at once and never a third", async () => {
    const f = fixture({ a: [1, 2, 3], b: [1, 2] }, 2);
    await until(() => f.taken.length >= 2);
    expect(f.taken).toEqual(["a1", "b1"]);
    expect(f.loop.running()).toBe(2);
    f.release.shift()!();
    await until(() => f.taken.length >= 3);
    expect(f.taken).toHaveLength(3);
    expect(f.most()).toBe(2);
    await f.loop.stop();
  });

  it("a source it may not take from keeps its jobs; a fetch error is said once and retried", async () => {
    const errors: string[] = [];
    let fail = 3;
    const kept = [1];
    const taken: string[] = [];
    const loop = startTakeLoop<string>({
      slots: 4,
      sources: [
        { name: "live", take: async () => (kept.length > 0 ? `live${kept.shift()}` : undefined) },
        {
          name: "replay",
          take: async () => {
            if (fail-- > 0) throw new Error("Connection is closed.");
            return undefined;
          },
        },
      ],
      mayTake: async (s) => s.name !== "live",
      run: async (j) => {
        taken.push(j);
      },
      idleMs: 1,
      sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
      onError: (m) => errors.push(m),
    });
    for (let i = 0; i < 500 && errors.length < 2; i++) await settle();
    await loop.stop();
    expect(taken).toEqual([]);
    expect(kept).toEqual([1]);
    expect(errors).toEqual(["replay: Connection is closed. (retrying)", "replay: the queue answers again"]);
  });
});
