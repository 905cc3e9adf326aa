import { describe, expect, it } from "vitest";
import { Budgets } from "../contracts/task-spec.js";
import { exhaustedBefore, nextCallTimeoutMs, primaryStop } from "./budgets.js";

const b = (o: Partial<Budgets> = {}) => Budgets.parse({ total_seconds: 120, per_call_seconds: 45, model_turns: 3, tool_calls: 2, ...o });
const counters = (o = {}) => ({ model_turns: 0, tool_calls: 0, writes: 0, elapsed_ms: 0, prompt_tokens: 0, completion_tokens: 0, ...o });

describe("budgets", () => {
  it("gives the next call the per-call cap when more than the cap remains (120 s total, 35 s used, cap 45 s -> 45 s)", () => {
    expect(nextCallTimeoutMs(b(), 35_000)).toBe(45_000);
  });
  it("gives the next call only what remains when less than the cap is left", () => {
    expect(nextCallTimeoutMs(b(), 100_000)).toBe(20_000);
  });
  it("refuses a next call once the total is used up, exactly at and past the total", () => {
    expect(nextCallTimeoutMs(b(), 120_000)).toBeNull();
    expect(nextCallTimeoutMs(b(), 130_000)).toBeNull();
    expect(exhaustedBefore("tool", b(), counters({ elapsed_ms: 121_000 }))).toBe("total_seconds");
  });
  it("names the count budget that ran out", () => {
    expect(exhaustedBefore("model", b(), counters({ model_turns: 3 }))).toBe("model_turns");
    expect(exhaustedBefore("tool", b(), counters({ model_turns: 3, tool_calls: 1 }))).toBeNull();
    expect(exhaustedBefore("tool", b(), counters({ tool_calls: 2 }))).toBe("tool_calls");
    expect(exhaustedBefore("model", b({ tokens: 100 }), counters({ prompt_tokens: 60, completion_tokens: 40 }))).toBe("tokens");
  });
  it("keeps both facts when cancel and timeout are both true, with cancelled as the primary status", () => {
    expect(primaryStop({ cancelled: true, timed_out: true, exhausted: "total_seconds" })).toEqual({
      status: "cancelled",
      reason: "cancelled (deadline also passed)",
    });
    expect(primaryStop({ cancelled: false, timed_out: false, exhausted: "tool_calls" })).toEqual({
      status: "budget_exhausted",
      reason: "budget_exhausted:tool_calls",
    });
    expect(primaryStop({ cancelled: false, timed_out: false, exhausted: null })).toBeNull();
  });
});
