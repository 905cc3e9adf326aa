import { CaseResult } from "../../daemon/src/contracts/eval-report.js";

/** A passed CaseResult with every field set; tests override what they need. */
export function result(over: Partial<CaseResult> = {}): CaseResult {
  return CaseResult.parse({
    id: "a",
    hash: "a".repeat(64),
    verdict: "passed",
    expected_status: "completed",
    status: "completed",
    reason: null,
    rules: [{ rule: "status", expected: "completed", observed: "completed", passed: true }],
    run_id: "r",
    tool_calls: 5,
    turns: 6,
    tokens: { prompt: 0, completion: 0 },
    wall_ms: 1000,
    prompts_by_policy: 2,
    uncertain: 0,
    verifier_rejections: 0,
    protocol_errors: 0,
    attempts: 1,
    trace_file: "traces/a.jsonl",
    diff_file: "diffs/a.diff",
    error: null,
    ...over,
  });
}
