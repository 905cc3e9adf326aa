import { describe, expect, it } from "vitest";
import type { RunView } from "../../daemon/src/contracts/run-view.js";
import { runEndLines } from "./render.js";

const view = (over: Partial<RunView>): RunView => ({
  run_id: "run_1",
  status: "completed",
  reason: null,
  task: "t",
  workspace: "/w",
  model: "replay",
  backend: "container",
  counters: { model_turns: 1, tool_calls: 1, writes: 1, elapsed_ms: 1, prompt_tokens: 0, completion_tokens: 0 },
  last_tool: null,
  tests: null,
  pending_action: null,
  verification: null,
  exhausted_budget: null,
  last_seq: 3,
  ...over,
});

describe("the end of a run's summary", () => {
  it("names the changed files (bounded, with the rest counted) and the trace file", () => {
    expect(runEndLines(view({ changed_files: { paths: ["a.js", "b.js"], count: 5 }, trace_file: "/s/traces/run_1.jsonl" }))).toBe(
      "changed files (5): a.js, b.js (+3 more)\ntrace file: /s/traces/run_1.jsonl\n",
    );
    expect(runEndLines(view({ changed_files: { paths: [], count: 0 } }))).toBe("changed files: none\n");
  });

  it("prints nothing extra for a daemon that reports neither", () => {
    expect(runEndLines(view({}))).toBe("");
  });
});
