import * as z from "zod/mini";

// zod/mini, not classic zod: the client parses every daemon answer with these
// schemas and a classic import alone costs more than its whole start-up budget
// (issue 10 item 16). Classic schemas compose them as z.nullable(RunStatus).

export const RunStatus = z.enum([
  "running",
  "awaiting_approval",
  "verifying",
  "completed",
  "failed",
  "cancelled",
  "budget_exhausted",
  "interrupted",
  "uncertain",
]);
export type RunStatus = z.infer<typeof RunStatus>;

/**
 * The run lifecycle: which status may follow which (issue 10 item 12). A new
 * run starts `running`; every later status write goes through
 * runtime/lifecycle.ts, which refuses a move this table does not list. Derived
 * from what the runtime does:
 *   running           -> awaiting_approval (a write proposed), verifying (the model said final),
 *                        failed / cancelled / budget_exhausted (a stop), interrupted (shutdown,
 *                        restart, sandbox or model unavailable), uncertain (resume found an unprovable
 *                        write), running (resumed while no process drove it)
 *   awaiting_approval -> running (approved, rejected, or the approval went stale), cancelled
 *   verifying         -> completed / failed (the Verifier's verdict), cancelled, interrupted,
 *                        uncertain, verifying (resumed into the Verifier)
 *   budget_exhausted  -> running (resumed with more budget), cancelled
 *   interrupted       -> running / verifying (resumed into the phase it left), cancelled
 * A status with no way out is terminal.
 */
/**
 * Who takes the turns of a run and saves its pauses (`--orchestrator`): mini-agent's own loop,
 * a LangGraph.js state graph, or the OpenAI Agents SDK's Runner. Tools, policy, approvals, the
 * ledger, the sandbox and the Verifier are the same for all three (daemon/src/orchestrators/).
 */
export const OrchestratorName = z.enum(["manual", "langgraph", "agents-sdk"]);
export type OrchestratorName = z.infer<typeof OrchestratorName>;
export const DEFAULT_ORCHESTRATOR = "manual" satisfies OrchestratorName;

export const INITIAL_RUN_STATUS = "running" satisfies RunStatus;

export const RUN_TRANSITIONS: Readonly<Record<RunStatus, readonly RunStatus[]>> = {
  running: ["running", "awaiting_approval", "verifying", "failed", "cancelled", "budget_exhausted", "interrupted", "uncertain"],
  awaiting_approval: ["running", "cancelled"],
  verifying: ["verifying", "completed", "failed", "cancelled", "interrupted", "uncertain"],
  budget_exhausted: ["running", "cancelled"],
  interrupted: ["running", "verifying", "cancelled"],
  completed: [],
  failed: [],
  cancelled: [],
  uncertain: [],
};

export function canMoveRun(from: RunStatus, to: RunStatus): boolean {
  return RUN_TRANSITIONS[from].includes(to);
}

/** completed, failed, cancelled, uncertain: nothing leaves them */
export const TERMINAL_STATUSES: readonly RunStatus[] = RunStatus.options.filter((s) => RUN_TRANSITIONS[s].length === 0);

export const EVENT_TYPES = [
  "run_created",
  "project_context",
  "model_requested",
  "model_retry",
  "plan_recorded",
  "tool_proposed",
  "tool_observed",
  "approval_requested",
  "approval_recorded",
  "action_intent",
  "action_written",
  "action_receipt",
  "verification_started",
  "verification_passed",
  "verification_failed",
  "history_compaction",
  "sandbox_include",
  "run_resumed",
  "run_stopped",
] as const;
export const EventType = z.enum(EVENT_TYPES);
export type EventType = z.infer<typeof EventType>;
