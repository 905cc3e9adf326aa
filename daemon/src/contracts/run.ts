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

export const TERMINAL_STATUSES: readonly RunStatus[] = ["completed", "failed", "cancelled", "uncertain"];

export const EVENT_TYPES = [
  "run_created",
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
  "run_resumed",
  "run_stopped",
] as const;
export const EventType = z.enum(EVENT_TYPES);
export type EventType = z.infer<typeof EventType>;
