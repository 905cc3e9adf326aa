import type { EvalReport } from "../../daemon/src/contracts/eval-report.js";
import { MiniAgentError } from "../../daemon/src/errors.js";
import type { GateOutcome, GateRuleName, GateRules } from "./gate-rules.js";
import { unexpectedProtocolErrors } from "./report-aggregate.js";

/**
 * The release gate: reads two reports (never runs anything) and decides
 * allow / review / block. Every rule is reported with what it saw, its
 * threshold and its outcome, so a decision can always be explained.
 */
export type GateDecision = "allow" | "review" | "block";

export interface GateRuleResult {
  rule: GateRuleName;
  /** what the rule saw, as text for people */
  observed: string;
  threshold: string;
  /** pass: the rule held; skipped: it could not be judged (note says why); off: turned off by the rules file */
  outcome: "pass" | "review" | "block" | "skipped" | "off";
  note: string | null;
}

export interface GateResult {
  decision: GateDecision;
  rules: GateRuleResult[];
  report: { suite_hash: string; cases: number };
  baseline: { suite_hash: string; cases: number } | null;
  /**
   * Settings in which the report differs from its baseline (model, runtime, policy profile,
   * concurrency), as `runtime runc -> runsc`. They do not make reports incomparable: the same
   * cases at the same versions were asked, and the difference (e.g. gVisor's slower syscalls
   * in wall time) is the very thing a release compares. Printed so nobody misses it.
   */
  settings_differ: string[];
}

/** exit codes of `mini-agent-client gate` (README "Release gate") */
// the exit codes live in the client's one table
export { GATE_EXIT } from "../../client-lib/index.js";

/**
 * Refuses two reports that are not of the same suite: another case set, or
 * the same case at another version (repo, task, control or expect changed).
 * A gate that compared them would compare different questions.
 */
export function assertComparable(report: EvalReport, baseline: EvalReport): void {
  const now = new Map(report.suite.cases.map((c) => [c.id, c.hash]));
  const before = new Map(baseline.suite.cases.map((c) => [c.id, c.hash]));
  const onlyNew = [...now.keys()].filter((id) => !before.has(id)).sort();
  const onlyOld = [...before.keys()].filter((id) => !now.has(id)).sort();
  if (onlyNew.length > 0 || onlyOld.length > 0) {
    const parts = [onlyNew.length > 0 && `only in the report: ${onlyNew.join(", ")}`, onlyOld.length > 0 && `only in the baseline: ${onlyOld.join(", ")}`];
    throw new MiniAgentError("reports_incomparable", `the report and the baseline are of different suites (${parts.filter(Boolean).join("; ")})`, {
      details: { only_in_report: onlyNew, only_in_baseline: onlyOld },
    });
  }
  const changed = [...now.entries()]
    .filter(([id, hash]) => before.get(id) !== hash)
    .map(([id]) => id)
    .sort();
  if (changed.length > 0) {
    throw new MiniAgentError(
      "reports_incomparable",
      `case version differs between the report and the baseline: ${changed.join(", ")} (its repo, task, control or expect.json changed; run the baseline again on the same cases)`,
      { details: { changed } },
    );
  }
}

export function gate(report: EvalReport, baseline: EvalReport | null, rules: GateRules): GateResult {
  if (baseline) assertComparable(report, baseline);
  const results: GateRuleResult[] = [
    completedCaseFails(report, rules),
    protocolErrorRate(report, rules),
    regressionTestMissing(report, rules),
    meanUp("tool_calls_up", "mean tool calls", report.aggregates.tool_calls.mean, baseline?.aggregates.tool_calls.mean ?? null, rules.tool_calls_up),
    meanUp("tokens_up", "mean tokens", report.aggregates.tokens.mean_per_case, baseline?.aggregates.tokens.mean_per_case ?? null, rules.tokens_up),
    passRateDown(report, baseline, rules),
    protocolErrorsMax(report, rules),
    toolCallsPerCaseMax(report, rules),
  ];
  const decision: GateDecision = results.some((r) => r.outcome === "block") ? "block" : results.some((r) => r.outcome === "review") ? "review" : "allow";
  return {
    decision,
    rules: results,
    report: { suite_hash: report.suite.hash, cases: report.cases.length },
    baseline: baseline && { suite_hash: baseline.suite.hash, cases: baseline.cases.length },
    settings_differ: baseline ? settingsDiffer(baseline, report) : [],
  };
}

function settingsDiffer(baseline: EvalReport, report: EvalReport): string[] {
  const keys = ["model", "runtime", "policy_profile", "concurrency"] as const;
  return keys.filter((k) => baseline.settings[k] !== report.settings[k]).map((k) => `${k} ${baseline.settings[k]} -> ${report.settings[k]}`);
}

/** A rule that found a problem gets the outcome the rules give it; one turned off reports `off` but still shows what it saw. */
function judged(rule: GateRuleName, outcome: GateOutcome, failed: boolean, observed: string, threshold: string, note: string | null = null): GateRuleResult {
  if (outcome === "off") return { rule, observed, threshold, outcome: "off", note };
  return { rule, observed, threshold, outcome: failed ? outcome : "pass", note };
}

function skipped(rule: GateRuleName, outcome: GateOutcome, observed: string, threshold: string, note: string): GateRuleResult {
  return { rule, observed, threshold, outcome: outcome === "off" ? "off" : "skipped", note };
}

function listIds(ids: string[]): string {
  return ids.length === 0 ? "none" : `${ids.length} (${ids.join(", ")})`;
}

function completedCaseFails(report: EvalReport, rules: GateRules): GateRuleResult {
  const failing = report.cases.filter((c) => c.expected_status === "completed" && c.verdict !== "passed").map((c) => `${c.id}: ${c.verdict}`);
  return judged(
    "completed_case_fails",
    rules.completed_case_fails.outcome,
    failing.length > 0,
    `failing: ${listIds(failing)}`,
    "0 cases expected to complete may fail",
  );
}

/**
 * Only errors no case expected count: a case that provokes a protocol error on
 * purpose (`require.protocol_errors` in its expect.json) shows the host refusing
 * it, which is no regression. A report made before the split counts every error.
 */
function protocolErrorRate(report: EvalReport, rules: GateRules): GateRuleResult {
  const { outcome, max } = rules.protocol_error_rate;
  const a = report.aggregates;
  const split = a.unexpected_protocol_error_rate !== undefined;
  const rate = a.unexpected_protocol_error_rate ?? a.protocol_error_rate;
  const observed = split
    ? `${pct(rate)} of tool calls unexpected${a.protocol_error_rate > rate ? ` (${pct(a.protocol_error_rate)} with the expected ones)` : ""}`
    : `${pct(rate)} of tool calls`;
  return judged("protocol_error_rate", outcome, rate > max, observed, `at most ${pct(max)}`);
}

function protocolErrorsMax(report: EvalReport, rules: GateRules): GateRuleResult {
  const { outcome, max } = rules.protocol_errors_max;
  const offending = report.cases.filter((c) => unexpectedProtocolErrors(c) > 0).map((c) => `${c.id}: ${unexpectedProtocolErrors(c)}`);
  const total = report.cases.reduce((n, c) => n + unexpectedProtocolErrors(c), 0);
  return judged(
    "protocol_errors_max",
    outcome,
    total > max,
    `unexpected protocol errors: ${total === 0 ? "none" : `${total} (${offending.join(", ")})`}`,
    `at most ${max}`,
  );
}

function toolCallsPerCaseMax(report: EvalReport, rules: GateRules): GateRuleResult {
  const { outcome, max } = rules.tool_calls_per_case_max;
  const over = report.cases.filter((c) => c.tool_calls > max).map((c) => `${c.id}: ${c.tool_calls}`);
  return judged("tool_calls_per_case_max", outcome, over.length > 0, `cases over it: ${listIds(over)}`, `at most ${max} tool calls per case`);
}

function regressionTestMissing(report: EvalReport, rules: GateRules): GateRuleResult {
  const missing = report.cases.filter((c) => c.status === "completed" && c.rules.some((r) => r.rule === "must_write_creatable" && !r.passed)).map((c) => c.id);
  return judged(
    "regression_test_missing",
    rules.regression_test_missing.outcome,
    missing.length > 0,
    `completed without a required regression test: ${listIds(missing)}`,
    "0 cases",
  );
}

function meanUp(
  rule: "tool_calls_up" | "tokens_up",
  what: string,
  now: number,
  before: number | null,
  r: { outcome: GateOutcome; max_increase: number },
): GateRuleResult {
  const threshold = `at most +${pct(r.max_increase)} vs the baseline`;
  if (before === null) return skipped(rule, r.outcome, `${what} ${fmt(now)}`, threshold, "no baseline");
  if (before === 0) return skipped(rule, r.outcome, `${what} ${fmt(now)} (baseline 0)`, threshold, "the baseline's value is 0: no ratio to compare");
  const change = (now - before) / before;
  return judged(rule, r.outcome, change > r.max_increase, `${what} ${fmt(before)} -> ${fmt(now)} (${change >= 0 ? "+" : ""}${pct(change)})`, threshold);
}

function passRateDown(report: EvalReport, baseline: EvalReport | null, rules: GateRules): GateRuleResult {
  const { outcome, max_drop } = rules.pass_rate_down;
  const now = report.aggregates.pass_rate;
  const threshold = max_drop === 0 ? "no drop vs the baseline" : `a drop of at most ${pct(max_drop)} vs the baseline`;
  if (!baseline) return skipped("pass_rate_down", outcome, `pass rate ${pct(now)}`, threshold, "no baseline");
  const before = baseline.aggregates.pass_rate;
  // compared in whole cases (both reports have the same cases), so float noise never reads as a drop
  const drop = before - now;
  return judged("pass_rate_down", outcome, drop > max_drop + 1e-9, `pass rate ${pct(before)} -> ${pct(now)}`, threshold);
}

function pct(x: number): string {
  return `${Number((x * 100).toFixed(1))} %`;
}

function fmt(x: number): string {
  return String(Number(x.toFixed(2)));
}
