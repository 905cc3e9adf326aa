import { termSafe } from "../../client-lib/index.js";
import { parseCli } from "../../daemon/src/config/cli-args.js";
import { usageFail } from "./usage.js";
import path from "node:path";
import { isMiniAgentError, type ErrorCode } from "../../daemon/src/errors.js";
import type { EvalCommand, EvalIO } from "./command.js";
import { GATE_EXIT, gate, type GateResult } from "./gate.js";
import { GATE_DEFAULTS, readGateRules } from "./gate-rules.js";
import { assertReportComplete, readEvalReport } from "./report-read.js";

const USAGE = `usage: mini-agent-client gate --report NEW.json [--baseline OLD.json] [--rules gate.json] [--json]
Reads eval reports (never runs anything) and decides:
  allow  exit 0    review  exit 10    block  exit 11
  refused exit 12: a report or rules file that is not valid, or reports of different suites / case versions
  usage error exit 64`;

/** the refusals: the gate could not judge, which must never read as allow, review or block */
const REFUSED: readonly ErrorCode[] = ["report_invalid", "reports_incomparable", "gate_rules_invalid"];

export interface GatePaths {
  report: string;
  baseline?: string | undefined;
  rules?: string | undefined;
}

/** Reads the files and judges: what the command does, callable from a test without a process. */
export async function runGate(paths: GatePaths): Promise<{ result: GateResult; exitCode: number }> {
  const report = await readEvalReport(paths.report);
  assertReportComplete(report, paths.report);
  const baseline = paths.baseline === undefined ? null : await readEvalReport(paths.baseline);
  if (baseline && paths.baseline) assertReportComplete(baseline, paths.baseline);
  const rules = paths.rules === undefined ? GATE_DEFAULTS : await readGateRules(paths.rules);
  const result = gate(report, baseline, rules);
  return { result, exitCode: GATE_EXIT[result.decision] };
}

export const gateCommand: EvalCommand = {
  async main(argv: string[], io: EvalIO): Promise<number> {
    const parsed = parseCli(
      argv,
      {
        report: { type: "string" },
        baseline: { type: "string" },
        rules: { type: "string" },
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" },
        // global options every client command accepts; the gate talks to no daemon
        socket: { type: "string" },
        "state-dir": { type: "string" },
      },
      false,
    );
    if (!parsed.ok) return usageFail(io, "gate", parsed.message);
    const values = parsed.values;
    if (values.help) {
      io.out(`${USAGE}\n`);
      return 0;
    }
    if (typeof values.report !== "string") return usageFail(io, "gate", "--report NEW.json is required");
    const abs = (p: unknown) => (typeof p === "string" ? path.resolve(io.cwd, p) : undefined);
    try {
      const { result, exitCode } = await runGate({ report: abs(values.report) as string, baseline: abs(values.baseline), rules: abs(values.rules) });
      io.out(values.json ? `${JSON.stringify(result)}\n` : renderGate(result));
      return exitCode;
    } catch (err) {
      if (isMiniAgentError(err) && REFUSED.includes(err.code)) {
        if (values.json) io.out(`${JSON.stringify({ decision: "refused", code: err.code, message: err.message })}\n`);
        io.err(`mini-agent-client gate: ${err.code}: ${termSafe(err.message, { lines: true })}\n`);
        return GATE_EXIT.refused;
      }
      throw err;
    }
  },
};

export function renderGate(result: GateResult): string {
  const rows = result.rules.map((r) => [r.rule, r.observed, r.threshold, r.note ? `${r.outcome} (${r.note})` : r.outcome]);
  const head = ["rule", "observed", "threshold", "outcome"];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] as string).length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] as number))).join("  ");
  const base = result.baseline ? `baseline: ${result.baseline.cases} case(s)` : "no baseline";
  const differ = result.settings_differ.length > 0 ? [`settings differ from the baseline: ${result.settings_differ.join(", ")}`] : [];
  // a rule's note names cases (folder names): each line terminal-safe
  return [`report: ${result.report.cases} case(s); ${base}`, ...differ, line(head), ...rows.map(line), `decision: ${result.decision}`]
    .map((l) => termSafe(l))
    .concat("")
    .join("\n");
}
