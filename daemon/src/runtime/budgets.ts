import type { Budgets } from "../contracts/task-spec.js";
import type { Counters, StopFacts } from "../store/records.js";
import type { RunStatus } from "../contracts/run.js";

export type Exhausted = NonNullable<StopFacts["exhausted"]>;

/**
 * Time the next model or tool call may take: min(remaining, per-call cap).
 * total 120 s, used 35 s, cap 45 s -> 45 s. Null when nothing remains, so no
 * new side effect is started past the deadline.
 */
export function nextCallTimeoutMs(budgets: Budgets, elapsedMs: number): number | null {
  const remaining = budgets.total_seconds * 1000 - elapsedMs;
  if (remaining <= 0) return null;
  return Math.min(remaining, budgets.per_call_seconds * 1000);
}

/** Which budget, if any, forbids the next step of the given kind. */
export function exhaustedBefore(step: "model" | "tool", budgets: Budgets, c: Counters): Exhausted | null {
  if (nextCallTimeoutMs(budgets, c.elapsed_ms) === null) return "total_seconds";
  if (budgets.tokens !== undefined && c.prompt_tokens + c.completion_tokens >= budgets.tokens) return "tokens";
  if (step === "model" && c.model_turns >= budgets.model_turns) return "model_turns";
  if (step === "tool" && c.tool_calls >= budgets.tool_calls) return "tool_calls";
  return null;
}

/**
 * One primary status from the facts. Cancel and timeout can both be true: both
 * stay recorded in StopFacts, and the primary is `cancelled` because the user's
 * decision is the more useful thing to report.
 */
export function primaryStop(f: StopFacts): { status: RunStatus; reason: string } | null {
  if (f.cancelled) return { status: "cancelled", reason: f.timed_out ? "cancelled (deadline also passed)" : "cancelled" };
  if (f.exhausted) return { status: "budget_exhausted", reason: `budget_exhausted:${f.exhausted}` };
  if (f.timed_out) return { status: "budget_exhausted", reason: "budget_exhausted:total_seconds" };
  return null;
}
