import { baselineFound, oneLine, quoteArgv, verdictWhy } from "../../client-lib/index.js";
import type { ExhaustedBudget, RunView, VerificationEvidence } from "../../daemon/src/contracts/run-view.js";
import { EXIT_CODE_ONLY_PASSED } from "../../daemon/src/contracts/run-view.js";
import { BUDGET_FLAGS } from "./args.js";

/**
 * The one line that says where a run stands and, when it did not complete,
 * why (issue 10 item 11): which hidden cases failed (ids only; the expected
 * answers never leave the daemon), which protected path changed, a false green
 * and why, no changes at all, where a secret was found in the diff (file and
 * line, never the value), which extra verify command failed, which budget ran out. Every command that reports
 * a run (run, status, list, approve/reject/resume, cancel) prints this line;
 * --json carries the view it is made from.
 *
 *   failed: hidden acceptance 4/5 passed (edges_trimmed failed); candidate tests 3/3 passed
 *   budget exhausted: tool_calls (40/40); resume with more budget: mini-agent-client resume RUN --max-tool-calls 80
 */
export function whyLine(run: RunView, commandPrefix = "", program = "mini-agent-client"): string {
  const resume = `${program} resume ${commandPrefix ? `${commandPrefix} ` : ""}${run.run_id}`;
  const reason = run.reason ? `: ${run.reason}` : "";
  switch (run.status) {
    case "completed":
      return oneLine(`completed: verified by the host Verifier (${passedFacts(run.verification)}); ${run.counters.writes} write(s)`);
    case "failed":
      return oneLine(`failed: ${failureWhy(run)}`);
    case "budget_exhausted":
      return oneLine(budgetWhy(run.exhausted_budget, run.reason, resume));
    case "cancelled":
      // the reason "cancelled" only repeats the status ("cancelled: cancelled")
      return oneLine(run.reason && run.reason !== "cancelled" ? `cancelled${reason}` : "cancelled");
    case "interrupted":
      return oneLine(`interrupted${reason}; continue with: ${resume}`);
    case "uncertain":
      return oneLine(
        `uncertain: ${run.reason ?? "a write may or may not have happened"}; inspect with: ${program} diff ${commandPrefix ? `${commandPrefix} ` : ""}${run.run_id}`,
      );
    case "awaiting_approval": {
      const a = run.pending_action;
      if (a?.command) return oneLine(`awaiting approval: run_command ${quoteArgv(a.command.argv)} (action ${a.action_id}, asked by ${a.command.rule})`);
      return oneLine(
        a ? `awaiting approval: ${a.tool} on ${a.path} (action ${a.action_id}${a.rule ? `, asked by ${a.rule}` : ""})` : `awaiting approval${reason}`,
      );
    }
    default:
      return oneLine(`${run.status}${reason}`);
  }
}

function passedFacts(v: VerificationEvidence | null): string {
  if (!v) return "no evidence recorded";
  // an exit-code-only preset has no count: it is never "N tests passed" (issue 11)
  const c = v.tests.compare;
  const before = c ? baselineFound(c) : "";
  const tests = v.tests.exit_code_only ? EXIT_CODE_ONLY_PASSED : `tests ${v.tests.passed}/${v.tests.discovered} passed${before}`;
  const acc = v.acceptance ? `, acceptance ${v.acceptance.passed.length}/${v.acceptance.passed.length + v.acceptance.failed.length} cases passed` : "";
  const checks = v.verify_commands ?? [];
  const extra = checks.length > 0 ? `, verify commands ${checks.filter((c) => c.passed).length}/${checks.length} passed` : "";
  return tests + acc + extra;
}

/** A failed run: the Verifier's findings when it judged, else the recorded reason (model_error, internal, ...). */
function failureWhy(run: RunView): string {
  const v = run.verification;
  if (!v || v.passed) return run.reason ?? "no reason recorded";
  return verdictWhy(v).join("; ");
}

function budgetWhy(b: ExhaustedBudget | null, reason: string | null, resume: string): string {
  if (!b)
    return `budget exhausted${reason ? `: ${reason}` : ""}; resume with more budget: ${resume} (${Object.keys(BUDGET_FLAGS)
      .map((f) => `--${f} N`)
      .join(", ")})`;
  const flag = Object.entries(BUDGET_FLAGS).find(([, field]) => field === b.name)?.[0];
  const used = b.name === "total_seconds" ? `${b.used}/${b.limit} s` : `${b.used}/${b.limit}`;
  // a suggestion, not a rule: the daemon checks the value against the task's schema
  return `budget exhausted: ${b.name} (${used}); resume with more budget: ${resume} --${flag ?? b.name} ${Math.max(1, b.limit * 2)}`;
}
