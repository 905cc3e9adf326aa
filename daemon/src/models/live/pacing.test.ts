import { describe, expect, it } from "vitest";
import { MiniAgentError } from "../../errors.js";
import { Pacing } from "./pacing.js";

function fake() {
  const waits: number[] = [];
  let now = 0;
  const pacing = new Pacing({ now: () => now, sleep: async (ms) => void (waits.push(ms), (now += ms)) });
  return { pacing, waits, advance: (ms: number) => (now += ms) };
}
const transient = (details: Record<string, unknown> = {}) => new MiniAgentError("model_error", "x", { details: { transient: true, ...details } });
const signal = new AbortController().signal;

describe("provider pacing after transient failures", () => {
  it("backs off exponentially, capped, and resets on success", async () => {
    const { pacing, waits } = fake();
    await pacing.beforeRequest(signal);
    for (let i = 0; i < 6; i++) {
      pacing.failed(transient());
      await pacing.beforeRequest(signal);
    }
    expect(waits).toEqual([500, 1000, 2000, 4000, 8000, 8000]);
    pacing.succeeded();
    await pacing.beforeRequest(signal);
    expect(waits).toHaveLength(6);
  });

  it("honours Retry-After (capped), waits only what is left, and ignores non-transient errors", async () => {
    const { pacing, waits, advance } = fake();
    pacing.failed(transient({ retry_after_ms: 2000 }));
    advance(1500);
    await pacing.beforeRequest(signal);
    pacing.failed(transient({ retry_after_ms: 3_600_000 }));
    await pacing.beforeRequest(signal);
    pacing.succeeded();
    pacing.failed(new MiniAgentError("model_error", "bad request", { details: { transient: false, status: 400 } }));
    await pacing.beforeRequest(signal);
    expect(waits).toEqual([500, 30_000]);
  });
});
