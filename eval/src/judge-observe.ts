import { PROTOCOL_ERROR_CODES } from "../../daemon/src/contracts/eval-case.js";
import type { RunStatus } from "../../daemon/src/contracts/run.js";
import type { RunView, TraceEvent } from "../../daemon/src/contracts/run-view.js";

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
  for (const e of events) {
    const p = e.payload;
    switch (e.type) {
      case "tool_proposed": {
        if (typeof p.name === "string") called.add(p.name);
        const args = p.arguments as Record<string, unknown> | undefined;
        if (p.name === "apply_patch" && args?.version === "absent" && e.call_id !== null) createdCalls.add(e.call_id);
        break;
      }
      case "tool_observed": {
        const tool = String(p.tool ?? "");
        const error = typeof p.error === "string" ? p.error : null;
        calls.push({ tool, ok: p.ok === true, error });
        if (tool !== "") called.add(tool);
        if (error !== null && PROTOCOL_ERROR_CODES.has(error)) protocol += 1;
        if (tool === "run_command" && error === "policy_denied") denied += 1;
        // a red run is an error result (tests_failed, false_green...) that still carries its figures
        if (tool === "run_tests" && (typeof p.discovered === "number" || p.exit_code_only === true)) tests.push(testColour(p));
        break;
      }
      case "action_written":
        if (typeof p.path === "string") writes.push({ path: p.path, created: e.call_id !== null && createdCalls.has(e.call_id) });
        break;
      case "approval_recorded":
        if (p.decision === "approved" && typeof p.by === "string" && p.by.startsWith("policy:")) byPolicy += 1;
        break;
      case "verification_failed":
        rejections += 1;
        break;
      case "run_stopped":
        if (p.status === "uncertain") uncertain += 1;
        if (typeof p.reason === "string" && p.reason.startsWith("model_error")) protocol += 1;
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

/**
 * The daemon's own verdict on that run_tests (tools/test-verdict.ts, against the
 * baseline when it had one), never a recount: eval once called a run green when
 * `failed === 0 && passed > 0`, which a skip the run added turned green while the
 * daemon said red.
 */
function testColour(p: Record<string, unknown>): "red" | "green" {
  return p.green === true ? "green" : "red";
}
