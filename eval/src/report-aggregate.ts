import type { ExpectRule } from "../../daemon/src/contracts/eval-case.js";
import type { CaseResult, EvalAggregates, EvalReport } from "../../daemon/src/contracts/eval-report.js";
import { suiteHash } from "./case-hash.js";

/** The suite's identity: each case by id and version, and one hash over the sorted `id:hash` lines (what the gate compares). */
export function suiteOf(cases: Array<{ id: string; hash: string }>): EvalReport["suite"] {
  const sorted = [...cases].map((c) => ({ id: c.id, hash: c.hash })).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return { cases: sorted, hash: suiteHash(sorted) };
}

export function aggregate(cases: CaseResult[]): EvalAggregates {
  const count = (v: CaseResult["verdict"]) => cases.filter((c) => c.verdict === v).length;
  const ruleFailures: Partial<Record<ExpectRule, number>> = {};
  for (const c of cases) for (const r of c.rules) if (!r.passed) ruleFailures[r.rule] = (ruleFailures[r.rule] ?? 0) + 1;
  const prompt = sum(cases.map((c) => c.tokens.prompt));
  const completion = sum(cases.map((c) => c.tokens.completion));
  const toolCalls = sum(cases.map((c) => c.tool_calls));
  const unexpected = sum(cases.map(unexpectedProtocolErrors));
  return {
    cases: cases.length,
    passed: count("passed"),
    failed: count("failed"),
    needs_human: count("needs_human"),
    errors: count("error"),
    pass_rate: cases.length === 0 ? 0 : count("passed") / cases.length,
    rule_failures: ruleFailures,
    wall_ms: spread(cases.map((c) => c.wall_ms)),
    tool_calls: spread(cases.map((c) => c.tool_calls)),
    tokens: { prompt, completion, mean_per_case: cases.length === 0 ? 0 : (prompt + completion) / cases.length },
    protocol_error_rate: toolCalls === 0 ? 0 : sum(cases.map((c) => c.protocol_errors)) / toolCalls,
    unexpected_protocol_errors: unexpected,
    unexpected_protocol_error_rate: toolCalls === 0 ? 0 : unexpected / toolCalls,
  };
}

/** A case's protocol errors beyond those its expect.json provokes on purpose. */
export function unexpectedProtocolErrors(c: CaseResult): number {
  return Math.max(0, c.protocol_errors - (c.expected_protocol_errors ?? 0));
}

/** The value at quantile q of ascending `sorted` by nearest rank: a value that occurred, never an interpolation. */
export function nearestRank(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number;
}

/** p50/p95 by nearest rank, and the mean; zeros when empty. */
export function spread(values: number[]): { p50: number; p95: number; mean: number } {
  if (values.length === 0) return { p50: 0, p95: 0, mean: 0 };
  const s = [...values].sort((a, b) => a - b);
  return { p50: nearestRank(s, 0.5), p95: nearestRank(s, 0.95), mean: sum(s) / s.length };
}

function sum(xs: number[]): number {
  return xs.reduce((a, b) => a + b, 0);
}
