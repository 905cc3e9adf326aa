import { termSafe } from "../../client-lib/index.js";
import path from "node:path";
import { type CaseResult, EvalReport } from "../../daemon/src/contracts/eval-report.js";
import { MiniAgentError } from "../../daemon/src/errors.js";
import { aggregate, suiteOf } from "./report-aggregate.js";
import { writeReportHtml } from "./report-html.js";
import { writeAtomic } from "./run-state.js";
import type { EvalIO } from "./command.js";

export const REPORT_FILE = "eval-report.json";

/**
 * The end of an eval run: eval-report.json (validated against the contract
 * before it is written, atomically), then the HTML page beside it.
 */
export async function finishReport(input: {
  output: string;
  cases: CaseResult[];
  settings: EvalReport["settings"];
  startedAt: number;
  finishedAt: number;
}): Promise<EvalReport> {
  const cases = [...input.cases].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const report = buildReport({ ...input, cases });
  writeAtomic(path.join(input.output, REPORT_FILE), `${JSON.stringify(report, null, 2)}\n`);
  await writeReportHtml(input.output);
  return report;
}

export function buildReport(input: { cases: CaseResult[]; settings: EvalReport["settings"]; startedAt: number; finishedAt: number }): EvalReport {
  const parsed = EvalReport.safeParse({
    schema_version: 1,
    kind: "eval_report",
    suite: suiteOf(input.cases),
    settings: input.settings,
    started_at: new Date(input.startedAt).toISOString(),
    finished_at: new Date(input.finishedAt).toISOString(),
    cases: input.cases,
    aggregates: aggregate(input.cases),
  });
  if (!parsed.success)
    throw new MiniAgentError(
      "report_invalid",
      `the report does not fit its contract: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
    );
  return parsed.data;
}

/**
 * The last line of an eval run, local or on a fleet (`where` adds e.g. "on 2
 * worker(s)"): a JSON summary with --json, else one line; exit 0 only when
 * every case passed.
 */
export function reportSummary(io: EvalIO, json: boolean, output: string, report: EvalReport, where = ""): 0 | 1 {
  const a = report.aggregates;
  const file = `${output}/${REPORT_FILE}`;
  if (json) io.out(`${JSON.stringify({ kind: "summary", report: file, aggregates: a })}\n`);
  else
    io.out(
      `${termSafe(`${a.passed}/${a.cases} passed (${a.failed} failed, ${a.needs_human} need a human, ${a.errors} errors)${where ? ` ${where}` : ""}; p50 ${(a.wall_ms.p50 / 1000).toFixed(1)}s p95 ${(a.wall_ms.p95 / 1000).toFixed(1)}s per case; report: ${file}`)}\n`,
    );
  return a.passed === a.cases ? 0 : 1;
}
