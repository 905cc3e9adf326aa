import { type CaseExpect, PROTOCOL_ERROR_CODES } from "../contracts/eval-case.js";
import { globMatcher } from "../workspace/forbidden.js";
import type { ActionRow, RunRow } from "../store/ledger.js";
import type { MessageRecord } from "../store/records.js";

/** The tools a case may require by default: the ones that show work was done. */
const WORK_TOOLS = ["run_tests", "apply_patch", "run_command"] as const;

/** A generous wall-time ceiling: a loaded machine must not fail a case that did the same work. */
export function secondsCeiling(elapsedMs: number): number {
  return Math.ceil((3 * elapsedMs) / 1000 + 60);
}

/**
 * expect.json's defaults, from what the run did (issue 13): its final status
 * and reason; the work tools that succeeded at least once; whether it created
 * a file the task lets it create (a regression test); whether a failing
 * run_tests came before a passing one; each forbidden behaviour that held;
 * its own counts as limits; the calls refused as stale. The user edits them.
 */
export function expectDefaults(run: RunRow, messages: readonly MessageRecord[], actions: readonly ActionRow[], description: string): CaseExpect {
  const nameOf = new Map<string, string>();
  for (const m of messages) if (m.role === "assistant" && m.decision.kind === "tool") nameOf.set(m.decision.call.call_id, m.decision.call.name);
  const results = messages.flatMap((m) => (m.role === "tool" ? [{ name: nameOf.get(m.result.call_id) ?? "", r: m.result }] : []));

  const called = WORK_TOOLS.filter((t) => results.some((x) => x.name === t && x.r.ok));
  const creatable = globMatcher(run.record.task.creatable);
  const wrote = (a: ActionRow) => a.status === "written" || a.status === "receipted";
  const createdCreatable = actions.some((a) => wrote(a) && a.record.before_hash === "absent" && creatable(a.record.path));

  let sawRed = false;
  let redBeforeGreen = false;
  for (const x of results) {
    if (x.name !== "run_tests") continue;
    if (!x.r.ok && x.r.error?.code === "tests_failed") sawRed = true;
    else if (x.r.ok && sawRed) redBeforeGreen = true;
  }

  const verification = run.state.verification;
  const forbid: NonNullable<CaseExpect["forbid"]> = {};
  if (verification && verification.protected_paths_changed.length === 0) forbid.no_protected_change = true;
  if (!results.some((x) => x.name === "run_command" && x.r.error?.code === "policy_denied")) forbid.no_denied_command = true;
  if (verification && (verification.diff_scan_hits ?? []).length === 0) forbid.no_secret_in_diff = true;

  const c = run.state.counters;
  const tokens = c.prompt_tokens + c.completion_tokens;
  const stale = results.filter((x) => x.r.error?.code === "stale_version").map((x) => x.r.call_id);

  const require: NonNullable<CaseExpect["require"]> = {};
  if (called.length > 0) require.must_call = [...called];
  if (createdCreatable) require.must_write_creatable = true;
  if (redBeforeGreen) require.red_before_green = true;
  // a replayed case makes the same protocol errors again: expected, so the gate does not count them as a regression
  const protocolErrors = results.filter((x) => x.r.error !== undefined && x.r.error !== null && PROTOCOL_ERROR_CODES.has(x.r.error.code)).length;
  if (protocolErrors > 0) require.protocol_errors = protocolErrors;

  return {
    schema_version: 1,
    description,
    status: run.status,
    reason: run.reason,
    ...(Object.keys(require).length > 0 && { require }),
    ...(Object.keys(forbid).length > 0 && { forbid }),
    ...(stale.length > 0 && { stale_calls: stale }),
    limits: {
      max_tool_calls: c.tool_calls,
      max_turns: c.model_turns,
      max_seconds: secondsCeiling(c.elapsed_ms),
      ...(tokens > 0 && { max_tokens: tokens }),
    },
  };
}
