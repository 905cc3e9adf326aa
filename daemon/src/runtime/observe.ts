import type { ToolResult } from "../contracts/tool-call.js";
import { patchState, type RuntimeDeps } from "./deps.js";

/**
 * A tool result becomes a message for the model and a tool_observed event,
 * together. The ledger redacts the message as it stores it (redact/), and the
 * model's view is rebuilt from the ledger: an observation reaches the model
 * only without secret shapes, whatever the tool read.
 */
export function observe(
  deps: RuntimeDeps,
  active: { runId: string; elapsedMs(): number } | { runId: string },
  tool: string,
  result: ToolResult,
  traceExtra: Record<string, unknown> = {},
): "continue" {
  deps.ledger.tx(() => {
    deps.ledger.appendMessage(active.runId, { schema_version: 1, role: "tool", result });
    patchState(deps, active.runId, (s) => {
      s.last_tool = tool;
      if ("elapsedMs" in active) s.counters.elapsed_ms = active.elapsedMs();
      const tests = testFigures(tool, result);
      if (tests) s.tests = tests;
    });
    deps.trace.append(active.runId, {
      type: "tool_observed",
      call_id: result.call_id,
      payload: {
        tool,
        ok: result.ok,
        error: result.error?.code ?? null,
        truncated: result.truncated,
        ...traceFigures(testFigures(tool, result)),
        ...traceExtra,
      },
      // the trace file's line carries what the model is shown; the event row keeps only the figures
      content: { kind: "observation", tool, result },
    });
  });
  return "continue";
}

type TestFigures = { discovered: number; passed: number; failed: number; exit_code_only?: boolean; green?: boolean; load_errors?: number };

/** What a run_tests result says for the run status; an exit-code-only run has no count, only pass or fail. */
function testFigures(tool: string, r: ToolResult): TestFigures | null {
  if (tool !== "run_tests" || r.data === null || typeof r.data !== "object") return null;
  const d = r.data as Record<string, unknown>;
  if (d.exit_code_only === true) return { discovered: 0, passed: 0, failed: 0, exit_code_only: true, green: d.green === true };
  const n = (k: string) => (typeof d[k] === "number" ? (d[k] as number) : 0);
  // the daemon's own verdict (against the baseline when it had one) rides along: no reader recounts it
  return {
    discovered: n("discovered"),
    passed: n("passed"),
    failed: n("failed"),
    green: d.green === true,
    ...(n("load_error_count") > 0 && { load_errors: n("load_error_count") }),
  };
}

/** The trace's figures: an exit-code-only run shows no counts there (it must never read as "0/0"). */
function traceFigures(f: TestFigures | null): Record<string, unknown> {
  if (f === null) return {};
  return f.exit_code_only ? { exit_code_only: true, green: f.green } : f;
}
