import { describe, expect, it } from "vitest";
import { EvalReport } from "../../daemon/src/contracts/eval-report.js";
import { result } from "./report.testkit.js";
import { aggregate, spread, suiteOf } from "./report-aggregate.js";
import { buildReport } from "./report-write.js";

describe("report aggregates", () => {
  it("pass rate, per-rule failure counts, p50/p95/mean, token totals and the protocol error rate", () => {
    const cases = [
      result({ id: "a", wall_ms: 1000, tool_calls: 4, tokens: { prompt: 10, completion: 5 } }),
      result({
        id: "b",
        verdict: "failed",
        wall_ms: 3000,
        tool_calls: 8,
        protocol_errors: 2,
        rules: [
          { rule: "status", expected: "completed", observed: "failed", passed: false },
          { rule: "max_tool_calls", expected: 5, observed: 8, passed: false },
        ],
      }),
      result({
        id: "c",
        verdict: "needs_human",
        wall_ms: 2000,
        tool_calls: 4,
        rules: [{ rule: "status", expected: "completed", observed: "cancelled", passed: false }],
      }),
      result({ id: "d", verdict: "error", wall_ms: 0, tool_calls: 0, rules: [], status: null, error: "refused" }),
    ];
    const a = aggregate(cases);
    expect(a).toMatchObject({ cases: 4, passed: 1, failed: 1, needs_human: 1, errors: 1, pass_rate: 0.25 });
    expect(a.rule_failures).toEqual({ status: 2, max_tool_calls: 1 });
    expect(a.wall_ms).toEqual({ p50: 1000, p95: 3000, mean: 1500 });
    expect(a.tool_calls).toEqual({ p50: 4, p95: 8, mean: 4 });
    expect(a.tokens).toEqual({ prompt: 10, completion: 5, mean_per_case: 3.75 });
    expect(a.protocol_error_rate).toBeCloseTo(2 / 16);
  });

  it("an empty suite has zeros, never NaN (the contract refuses NaN)", () => {
    const a = aggregate([]);
    expect(a.pass_rate).toBe(0);
    expect(a.wall_ms).toEqual({ p50: 0, p95: 0, mean: 0 });
    expect(a.protocol_error_rate).toBe(0);
  });

  it("p95 is a value that occurred (nearest rank), not an interpolation", () => {
    expect(spread([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 100])).toMatchObject({ p50: 10, p95: 19 });
  });

  it("the suite hash depends on every case's id and version, not on their order", () => {
    const s1 = suiteOf([
      { id: "b", hash: "b".repeat(64) },
      { id: "a", hash: "a".repeat(64) },
    ]);
    const s2 = suiteOf([
      { id: "a", hash: "a".repeat(64) },
      { id: "b", hash: "b".repeat(64) },
    ]);
    const s3 = suiteOf([
      { id: "a", hash: "a".repeat(64) },
      { id: "b", hash: "c".repeat(64) },
    ]);
    expect(s1).toEqual(s2);
    expect(s3.hash).not.toBe(s1.hash);
  });

  it("the built report validates against EvalReport", () => {
    const r = buildReport({
      cases: [result()],
      settings: { model: "replay", runtime: "runc", policy_profile: "eval", concurrency: 2 },
      startedAt: 0,
      finishedAt: 5000,
    });
    expect(EvalReport.safeParse(r).success).toBe(true);
    expect(r.finished_at).toBe("1970-01-01T00:00:05.000Z");
  });
});
