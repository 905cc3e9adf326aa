import { PROTOCOL_ERROR_CODES } from "../../daemon/src/contracts/eval-case.js";
import type { RunStatus } from "../../daemon/src/contracts/run.js";
import type { RunView, TraceEvent } from "../../daemon/src/contracts/run-view.js";
import { readTraceEvent } from "../../daemon/src/contracts/trace-event.js";

/**
 * What a finished run did, read from its run view and its trace events only
 * (never from the workspace, which is removed after judging). judge.ts holds
 * this against expect.json; the report's counts come from here too, so a count
 * and a rule never disagree about the same fact.
 */
export interface Observation {
  status: RunStatus;
  reason: string | null;
  /** every tool_observed, in order */
  calls: Array<{ tool: string; ok: boolean; error: string | null }>;
  /** tools the model called (proposed or observed), sorted, unique */
  called: string[];
  /** writes that landed (action_written), with whether the proposal created the file (version "absent") */
  writes: Array<{ path: string; created: boolean }>;
  /** run_tests outcomes in order: red (something failed) or green (all passed) */
  tests: Array<"red" | "green">;
  /** the Verifier's evidence: protected paths that changed */
  protected_changed: string[];
  /** run_command calls the policy denied */
  denied_commands: number;
  /** the Verifier's diff scan: secret hits (file:line rule, never a value) */
  secret_hits: string[];
  tool_calls: number;
  turns: number;
  tokens: { prompt: number; completion: number };
  elapsed_ms: number;
  prompts_by_policy: number;
  uncertain: number;
  verifier_rejections: number;
  protocol_errors: number;
}

export function observeRun(run: RunView, events: TraceEvent[]): Observation {
  const calls: Observation["calls"] = [];
  const called = new Set<string>();
  const createdCalls = new Set<string>();
  const writes: Observation["writes"] = [];
  const tests: Observation["tests"] = [];
  let denied = 0;
  let byPolicy = 0;
  let uncertain = 0;
  let rejections = 0;
  let protocol = 0;
  for (const raw of events) {
    // an event this version cannot read (a newer daemon's type or field shape) says nothing these counts are made of
    const e = readTraceEvent(raw);
    if (e === null) continue;
    switch (e.type) {
      case "tool_proposed": {
        const p = e.payload;
        called.add(p.name);
        if (p.name === "apply_patch" && p.arguments.version === "absent" && e.call_id !== null) createdCalls.add(e.call_id);
        break;
      }
      case "tool_observed": {
        const p = e.payload;
        calls.push({ tool: p.tool, ok: p.ok, error: p.error });
        if (p.tool !== "") called.add(p.tool);
        if (p.error !== null && PROTOCOL_ERROR_CODES.has(p.error)) protocol += 1;
        if (p.tool === "run_command" && p.error === "policy_denied") denied += 1;
        // a red run is an error result (tests_failed, false_green...) that still carries its figures;
        // its colour is the daemon's own verdict (`green`, tools/test-verdict.ts), never a recount
        if (p.tool === "run_tests" && (p.discovered !== undefined || p.exit_code_only === true)) tests.push(p.green === true ? "green" : "red");
        break;
      }
      case "action_written":
        writes.push({ path: e.payload.path, created: e.call_id !== null && createdCalls.has(e.call_id) });
        break;
      case "approval_recorded":
        if (e.payload.decision === "approved" && e.payload.by?.startsWith("policy:")) byPolicy += 1;
        break;
      case "verification_failed":
        rejections += 1;
        break;
      case "run_stopped":
        if (e.payload.status === "uncertain") uncertain += 1;
        if (e.payload.reason?.startsWith("model_error")) protocol += 1;
        break;
      default:
        break;
    }
  }
  // a run stopped for a model error before any run_stopped reached the trace still counts once
  if (protocol === 0 && typeof run.reason === "string" && run.reason.startsWith("model_error")) protocol = 1;
  const v = run.verification;
  return {
    status: run.status,
    reason: run.reason,
    calls,
    called: [...called].sort(),
    writes,
    tests,
    protected_changed: v?.protected_paths_changed ?? [],
    denied_commands: denied,
    secret_hits: (v?.diff_scan_hits ?? []).map((h) => `${h.path}:${h.line} ${h.rule}`),
    tool_calls: run.counters.tool_calls,
    turns: run.counters.model_turns,
    tokens: { prompt: run.counters.prompt_tokens, completion: run.counters.completion_tokens },
    elapsed_ms: run.counters.elapsed_ms,
    prompts_by_policy: byPolicy,
    uncertain: Math.max(uncertain, run.status === "uncertain" ? 1 : 0),
    verifier_rejections: rejections,
    protocol_errors: protocol,
  };
}
