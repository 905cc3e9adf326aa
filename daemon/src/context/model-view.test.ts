import { describe, expect, it } from "vitest";
import { isMiniAgentError } from "../errors.js";
import { buildModelView, jsonBytes } from "./model-view.js";
import { groupMessages, toolCallMessage, toolResultMessage, type ChatMessage, type MessageGroup } from "./messages.js";
import type { RunSummary } from "./summary.js";

const DIGEST = "d".repeat(64);
const GOAL = "Fix the link checker so relative links resolve from the document's directory, add a regression test, keep notes.txt untouched.";

function summary(over: Partial<RunSummary> = {}): RunSummary {
  return {
    goal: GOAL,
    constraints: ["writable: src/**", "creatable: tests/test_agent_*.js", "notes.txt is protected"],
    status: "running",
    reason: null,
    workspace_digest: DIGEST,
    plan: "read src, write a failing test, fix, run tests",
    pending_action: null,
    counters: { model_turns: 41, tool_calls: 40, writes: 2 },
    verification: { last_tests: { discovered: 3, passed: 2, failed: 1 } },
    ...over,
  };
}

function readGroup(i: number, bytes = 300): MessageGroup {
  const call = { call_id: `c${i}`, name: "read_file", arguments: { path: `src/f${i}.js` } };
  return {
    messages: [
      toolCallMessage(call),
      toolResultMessage({ call_id: `c${i}`, ok: true, data: { text: "x".repeat(bytes), version: "a".repeat(64) }, error: null, truncated: false }, "read_file"),
    ],
  };
}

function failingTestsGroup(i: number): MessageGroup {
  const call = { call_id: `c${i}`, name: "run_tests", arguments: { preset: "unit" } };
  const output = `${"ok 1 - passes\n".repeat(400)}not ok 3 - nested link resolves from the document dir\n  expected: 'docs/a.md'\n  actual: 'a.md'\n`;
  return {
    messages: [
      toolCallMessage(call),
      toolResultMessage(
        {
          call_id: `c${i}`,
          ok: false,
          data: { exit_code: 1, discovered: 3, passed: 2, failed: 1, output },
          error: { code: "tests_failed", message: "1 of 3 tests failed" },
          truncated: false,
        },
        "run_tests",
      ),
    ],
  };
}

function longHistory(): MessageGroup[] {
  const groups: MessageGroup[] = [{ messages: [{ role: "user", content: GOAL }] }];
  for (let i = 1; i <= 40; i++) groups.push(i === 30 ? failingTestsGroup(i) : readGroup(i));
  return groups;
}

function assertPairsIntact(messages: ChatMessage[]): void {
  const asked = new Set<string>();
  const answered = new Set<string>();
  for (const m of messages) {
    if (m.role === "assistant") for (const c of m.tool_calls ?? []) asked.add(c.id);
    if (m.role === "tool") answered.add(m.tool_call_id);
  }
  expect([...answered].sort()).toEqual([...asked].sort());
}

describe("buildModelView", () => {
  it("standard check: a long history under an 1800-byte budget keeps goal, workspace digest, status and counters", () => {
    const view = buildModelView({ runId: "r1", summary: summary(), groups: longHistory(), budgetBytes: 1800, tools: [] });
    const messages = view.messages as ChatMessage[];
    expect(jsonBytes(messages)).toBeLessThanOrEqual(1800);
    expect(view.compaction.over_budget).toBe(false);
    const first = messages[0]!;
    expect(first.role).toBe("system");
    const state = (first.content as string).split("RUN_STATE\n")[1]!.split("\n");
    expect(state).toContain(`goal: ${GOAL}`);
    expect(state).toContain(`workspace_digest: ${DIGEST}`);
    expect(state).toContain("status: running");
    expect(state).toContain("counters: model_turns=41 tool_calls=40 writes=2");
    expect(view.compaction.dropped_groups).toBeGreaterThan(0);
  });

  it("never splits a tool call from its result: every tool_call_id has its assistant tool_call and vice versa", () => {
    for (const budget of [600, 900, 1800, 2500, 5000, 20_000]) {
      const view = buildModelView({ runId: "r1", summary: summary(), groups: longHistory(), budgetBytes: budget, tools: [] });
      assertPairsIntact(view.messages as ChatMessage[]);
    }
  });

  it("keeps the most recent failure first, trimmed to call_id, error and key diagnostics", () => {
    const view = buildModelView({ runId: "r1", summary: summary(), groups: longHistory(), budgetBytes: 1800, tools: [] });
    expect(view.compaction.pinned_failure).toBe(true);
    const tool = (view.messages as ChatMessage[]).find((m) => m.role === "tool" && m.tool_call_id === "c30");
    expect(tool).toBeDefined();
    const env = JSON.parse(tool!.content as string);
    expect(env.untrusted_workspace_data).toBe(true);
    expect(env.call_id).toBe("c30");
    expect(env.error.code).toBe("tests_failed");
    expect(env.trimmed.original_bytes).toBeGreaterThan(5000);
    expect(env.data.structure).toMatchObject({ exit_code: 1, failed: 1 });
    expect(env.data.key_diagnostics.join("\n")).toContain("not ok 3");
    // newer groups after the failure are still there when room allows, older ones dropped
    expect(view.compaction.dropped_call_ids).toContain("c1");
  });

  it("names what was dropped in a history_compaction marker", () => {
    const view = buildModelView({ runId: "r1", summary: summary(), groups: longHistory(), budgetBytes: 1800, tools: [] });
    const marker = (view.messages as ChatMessage[]).find((m) => m.role === "system" && (m.content as string).startsWith("history_compaction: "));
    expect(marker).toBeDefined();
    const text = marker!.content as string;
    expect(text).toContain(`${view.compaction.dropped_groups} message group(s) dropped`);
    expect(text).toContain(view.compaction.dropped_call_ids.at(-1)!);
    expect(text).toContain("payloads trimmed to structure, error and key diagnostics: c30");
  });

  it("sends everything unchanged and no marker when the history fits", () => {
    const groups = [readGroup(1, 50), readGroup(2, 50)];
    const view = buildModelView({ runId: "r1", summary: summary(), groups, budgetBytes: 20_000, tools: [{ type: "function" }] });
    expect(view.messages).toHaveLength(5);
    expect(view.messages.slice(1)).toEqual(groups.flatMap((g) => g.messages));
    expect(view.compaction.dropped_groups).toBe(0);
    expect(view.tools).toEqual([{ type: "function" }]);
  });

  it("drops an unanswered tool call (the action awaiting approval) instead of sending a broken pair", () => {
    const call = { call_id: "w1", name: "apply_patch", arguments: { path: "src/a.js", version: "absent", old: "", new: "x" } };
    const { groups, incomplete } = groupMessages([...readGroup(1, 10).messages, toolCallMessage(call)]);
    expect(incomplete).toHaveLength(1);
    const view = buildModelView({ runId: "r1", summary: summary(), groups: [...groups, { messages: incomplete[0]! }], budgetBytes: 20_000, tools: [] });
    assertPairsIntact(view.messages as ChatMessage[]);
    expect(view.compaction.incomplete_dropped).toBe(1);
  });

  it("a huge patch in a kept assistant call keeps its path and version and stays valid JSON", () => {
    const call = { call_id: "p1", name: "apply_patch", arguments: { path: "src/a.js", version: "absent", old: "", new: "y".repeat(50_000) } };
    const group = {
      messages: [toolCallMessage(call), toolResultMessage({ call_id: "p1", ok: true, data: { written: true }, error: null, truncated: false }, "apply_patch")],
    };
    const view = buildModelView({ runId: "r1", summary: summary(), groups: [group], budgetBytes: 1800, tools: [] });
    const assistant = (view.messages as ChatMessage[]).find((m) => m.role === "assistant");
    expect(assistant).toBeDefined();
    const args = JSON.parse((assistant as { tool_calls: Array<{ function: { arguments: string } }> }).tool_calls[0]!.function.arguments);
    expect(args.path).toBe("src/a.js");
    expect(args.version).toBe("absent");
    expect(args.new).toMatch(/^\[trimmed: 50000 bytes/);
  });

  it("a pluggable size function changes what fits", () => {
    const tokens = (messages: ChatMessage[]) => Math.ceil(jsonBytes(messages) / 4);
    const bytesView = buildModelView({ runId: "r1", summary: summary(), groups: longHistory(), budgetBytes: 1800, tools: [] });
    const tokenView = buildModelView({ runId: "r1", summary: summary(), groups: longHistory(), budgetBytes: 1800, tools: [], size: tokens });
    expect(tokenView.compaction.kept_groups).toBeGreaterThan(bytesView.compaction.kept_groups);
  });

  it("rejects unknown options and a malformed message with invalid_request", () => {
    const bad = () => buildModelView({ runId: "r1", summary: summary(), groups: [], budgetBytes: 1800, tools: [], budget: 3 } as never);
    expect(bad).toThrow();
    try {
      buildModelView({ runId: "r1", summary: summary(), groups: [{ messages: [{ role: "robot", content: "x" } as never] }], budgetBytes: 1800, tools: [] });
      expect.unreachable();
    } catch (err) {
      expect(isMiniAgentError(err, "invalid_request")).toBe(true);
    }
  });

  it("a 16 KB goal is clipped (with a note) only at the tightest level; digest, status and counters stay verbatim", () => {
    const goal = `${"g".repeat(16_000)}END`;
    const view = buildModelView({ runId: "r1", summary: summary({ goal }), groups: longHistory(), budgetBytes: 1800, tools: [] });
    const head = (view.messages as ChatMessage[])[0]!.content as string;
    expect(jsonBytes(view.messages as ChatMessage[])).toBeLessThanOrEqual(1800);
    expect(view.compaction.summary_level).toBe(3);
    expect(head).toContain("goal clipped");
    expect(head).toContain(`workspace_digest: ${DIGEST}`);
    expect(head).toContain("status: running");
    expect(head).toContain("counters: model_turns=41 tool_calls=40 writes=2");
  });
});
