import { createHash } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { CaseResult, EvalReport } from "../../daemon/src/contracts/eval-report.js";
import { aggregate, suiteOf } from "./report-aggregate.js";

/**
 * Hand-built eval reports for tests of the gate, the HTML page and metrics:
 * realistic, valid against EvalReport (checked on every build), with the
 * aggregates computed from the cases the way the runner defines them.
 */
export function caseHash(id: string, version = "v1"): string {
  return createHash("sha256").update(`${id}@${version}`).digest("hex");
}

export function makeCase(id: string, over: Partial<CaseResult> = {}): CaseResult {
  const passed = (over.verdict ?? "passed") === "passed";
  return {
    id,
    hash: caseHash(id),
    verdict: "passed",
    expected_status: "completed",
    status: passed ? "completed" : "failed",
    reason: passed ? "verified by the host" : "verification_failed",
    rules: [
      { rule: "status", expected: "completed", observed: passed ? "completed" : "failed", passed },
      { rule: "must_call", expected: ["run_tests"], observed: ["read_file", "apply_patch", "run_tests"], passed: true },
      { rule: "max_tool_calls", expected: 20, observed: 6, passed: true },
    ],
    run_id: `run-${id}`,
    tool_calls: 6,
    turns: 4,
    tokens: { prompt: 0, completion: 0 },
    wall_ms: 4200,
    prompts_by_policy: 2,
    uncertain: 0,
    verifier_rejections: passed ? 0 : 1,
    protocol_errors: 0,
    attempts: 1,
    trace_file: `traces/${id}.jsonl`,
    diff_file: `diffs/${id}.diff`,
    error: null,
    ...over,
  };
}

/** a report as the runner builds it (its own suite hash and aggregates), with fixed times and settings */
export function makeReport(cases: CaseResult[], over: Partial<EvalReport> = {}): EvalReport {
  const sorted = [...cases].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return EvalReport.parse({
    schema_version: 1,
    kind: "eval_report",
    suite: suiteOf(sorted),
    settings: { model: "replay", runtime: "runc", policy_profile: "eval", concurrency: 2 },
    started_at: "2026-12-01T17:00:00.000Z",
    finished_at: "2026-12-01T17:02:30.000Z",
    cases: sorted,
    aggregates: aggregate(sorted),
    ...over,
  });
}

/** A passed CaseResult with every field set (id "a"); tests override what they need. */
export function result(over: Partial<CaseResult> = {}): CaseResult {
  return CaseResult.parse(
    makeCase(over.id ?? "a", {
      reason: null,
      tool_calls: 5,
      turns: 6,
      wall_ms: 1000,
      rules: [{ rule: "status", expected: "completed", observed: "completed", passed: true }],
      run_id: "r",
      ...over,
    }),
  );
}

/** Writes a report folder as the runner lays it out: eval-report.json, diffs/<id>.diff. */
export async function writeReportFolder(dir: string, report: EvalReport, diffs: Record<string, string> = {}): Promise<string> {
  await mkdir(path.join(dir, "diffs"), { recursive: true });
  await writeFile(path.join(dir, "eval-report.json"), `${JSON.stringify(report, null, 2)}\n`);
  for (const [rel, text] of Object.entries(diffs)) {
    await mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
    await writeFile(path.join(dir, rel), text);
  }
  return path.join(dir, "eval-report.json");
}

/** the hostile strings the page must show as text: markup, a script end, control and bidi characters */
export const HOSTILE_ID = `x</script><img src=x onerror=alert(1)>\u202Eevil`;
export const HOSTILE_DIFF = `--- a/src/x.js\n+++ b/src/x.js\n@@ -1 +1 @@\n-const a = 1;\n+const a = "</script><script>alert(2)</script>"; // \u202Egnp.exe\u0007\u001b[31m\n+<img src="https://example.com/t.png" onerror="alert(3)">\n`;

/** two cases, one of them hostile (id, reason, rule values; its diff is diffs/hostile.diff = HOSTILE_DIFF) */
export function hostileReport(): EvalReport {
  return makeReport([
    makeCase("linkcheck"),
    makeCase(HOSTILE_ID, {
      verdict: "failed",
      reason: `<b>bold</b>\u2066reason`,
      diff_file: "diffs/hostile.diff",
      rules: [{ rule: "reason", expected: "</td>", observed: { "<i>": "\u202E" }, passed: false }],
    }),
  ]);
}
