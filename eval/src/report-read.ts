import { readFile, stat } from "node:fs/promises";
import { describeZodError } from "../../daemon/src/contracts/common.js";
import { EvalReport } from "../../daemon/src/contracts/eval-report.js";
import { MiniAgentError } from "../../daemon/src/errors.js";

/** a report far beyond any suite's (each case is a few KiB): refused before it is read into memory */
export const REPORT_MAX_BYTES = 64 * 1024 * 1024;

/**
 * Reads and validates an eval-report.json: the one way the gate, the HTML page
 * and tests load a report. Anything else (unreadable, too large, not JSON, a
 * field the contract does not know) is `report_invalid`, naming the file and
 * the zod path.
 */
export async function readEvalReport(file: string): Promise<EvalReport> {
  let text: string;
  try {
    const size = (await stat(file)).size;
    if (size > REPORT_MAX_BYTES) throw new MiniAgentError("report_invalid", `${file} is ${size} bytes, more than an eval report may be (${REPORT_MAX_BYTES})`);
    text = await readFile(file, "utf8");
  } catch (err) {
    if (err instanceof MiniAgentError) throw err;
    throw new MiniAgentError("report_invalid", `cannot read the eval report ${file}: ${(err as NodeJS.ErrnoException).code ?? "unreadable"}`, { cause: err });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new MiniAgentError("report_invalid", `${file} is not JSON`);
  }
  return parseEvalReport(json, file);
}

export function parseEvalReport(json: unknown, name: string): EvalReport {
  const parsed = EvalReport.safeParse(json);
  if (!parsed.success) throw new MiniAgentError("report_invalid", `${name} is not a valid eval report:\n${describeZodError(parsed.error)}`);
  return parsed.data;
}

/**
 * The gate's extra check: the suite lists what was meant to run, the cases
 * what did; a report where they differ (an unfinished run) cannot be judged
 * case by case. The HTML page shows such a report as it is.
 */
export function assertReportComplete(report: EvalReport, name: string): void {
  const listed = report.suite.cases.map((c) => `${c.id}:${c.hash}`).sort();
  const ran = report.cases.map((c) => `${c.id}:${c.hash}`).sort();
  if (listed.length !== ran.length || listed.some((l, i) => l !== ran[i])) {
    throw new MiniAgentError("report_invalid", `${name} cannot be gated: its cases do not match its suite (suite.cases vs cases; an unfinished run?)`);
  }
}
