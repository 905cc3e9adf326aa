import type { RunState } from "../../store/records.js";

/** A new run's state: nothing spent, nothing pending. */
export function initialState(): RunState {
  return {
    schema_version: 1,
    counters: { model_turns: 0, tool_calls: 0, writes: 0, elapsed_ms: 0, prompt_tokens: 0, completion_tokens: 0 },
    stop: { cancelled: false, timed_out: false, exhausted: null },
    interrupted_from: null,
    pending_action_id: null,
    last_tool: null,
    last_plan: null,
    tests: null,
    verification: null,
  };
}
