import { describe, expect, it } from "vitest";
import { Decision } from "../../contracts/decision.js";
import { ARGUMENTS_NOT_JSON_KEY, decodeJsonAction, decodeToolMessage, INVALID_OUTPUT_TOOL } from "./decode.js";

const call = (name: string, args: unknown, id: string | null = "call_1") => ({
  content: null,
  tool_calls: [{ id, type: "function", function: { name, arguments: args as string } }],
});

describe("decoding a model message into one Decision", () => {
  it("keeps a valid call and takes only the first of parallel calls", () => {
    const d = decodeToolMessage(
      { content: "thinking", tool_calls: [...call("read_file", '{"path":"a.js"}').tool_calls, ...call("search", '{"query":"x"}', "call_2").tool_calls] },
      "seed",
    );
    expect(d).toEqual({ kind: "tool", call: { call_id: "call_1", name: "read_file", arguments: { path: "a.js" } } });
  });

  it.each([
    ["truncated JSON", '{"path": "a.js"'],
    ["a JSON array", "[1,2]"],
    ["a JSON string", '"a.js"'],
  ])("arguments that are %s become a single marker field the strict schema rejects", (_n, args) => {
    const d = decodeToolMessage(call("read_file", args), "seed");
    expect(d.kind).toBe("tool");
    if (d.kind === "tool") expect(Object.keys(d.call.arguments)).toEqual([ARGUMENTS_NOT_JSON_KEY]);
    expect(Decision.safeParse(d).success).toBe(true);
  });

  it("object arguments (some servers) and empty-string arguments are accepted", () => {
    expect(decodeToolMessage(call("show_diff", ""), "s")).toMatchObject({ kind: "tool", call: { arguments: {} } });
    expect(decodeToolMessage(call("read_file", { path: "x" }), "s")).toMatchObject({ kind: "tool", call: { arguments: { path: "x" } } });
  });

  it("derives a stable valid call id when the provider's is missing or unusable", () => {
    const a = decodeToolMessage(call("show_diff", "{}", null), "seed-1");
    const b = decodeToolMessage(call("show_diff", "{}", null), "seed-1");
    const c = decodeToolMessage(call("show_diff", "{}", "bad id/with slash"), "seed-1");
    expect(a).toEqual(b);
    expect(a.kind === "tool" && a.call.call_id).toMatch(/^call_[0-9a-f]{24}$/);
    expect(c.kind === "tool" && c.call.call_id).toMatch(/^call_[0-9a-f]{24}$/);
  });

  it("regression: a provider that reuses call ids per reply ('call_0' every turn) gets a fresh id, so a new call never pairs with an old result", () => {
    const used = new Set(["call_0"]);
    const d = decodeToolMessage(call("show_diff", "{}", "call_0"), "seed-turn-2", used);
    expect(d.kind === "tool" && d.call.call_id).toMatch(/^call_[0-9a-f]{24}$/);
    expect(decodeJsonAction('{"kind":"tool","call":{"call_id":"call_0","name":"show_diff","arguments":{}}}', "s", used)).toMatchObject({
      call: { call_id: expect.stringMatching(/^call_[0-9a-f]{24}$/) },
    });
    expect(decodeToolMessage(call("show_diff", "{}", "call_1"), "s", used)).toMatchObject({ call: { call_id: "call_1" } });
  });

  it("a tool name longer than 64 characters becomes the invalid_output pseudo-tool", () => {
    const d = decodeToolMessage(call("x".repeat(65), "{}"), "s");
    expect(d.kind === "tool" && d.call.name).toBe(INVALID_OUTPUT_TOOL);
  });

  it("text: FINAL marks the end, other text is a plan, empty text is invalid output", () => {
    expect(decodeToolMessage({ content: "final: all 3 tests pass" }, "s")).toEqual({ kind: "final", text: "all 3 tests pass" });
    expect(decodeToolMessage({ content: "First I read the code." }, "s")).toEqual({ kind: "plan", text: "First I read the code." });
    expect(decodeToolMessage({ content: "Finally, I will read" }, "s")).toEqual({ kind: "plan", text: "Finally, I will read" });
    const empty = decodeToolMessage({ content: "" }, "s");
    expect(empty.kind === "tool" && empty.call.name).toBe(INVALID_OUTPUT_TOOL);
    const long = decodeToolMessage({ content: "p".repeat(10_000) }, "s");
    expect(long.kind === "plan" && long.text.length).toBe(8192);
  });
});

describe("JSON-action mode", () => {
  it("accepts a bare or fenced Decision and fills a missing call_id", () => {
    expect(decodeJsonAction('{"kind":"plan","text":"go"}', "s")).toEqual({ kind: "plan", text: "go" });
    const d = decodeJsonAction('```json\n{"kind":"tool","call":{"name":"search","arguments":{"query":"q"}}}\n```', "s");
    expect(d).toMatchObject({ kind: "tool", call: { name: "search", arguments: { query: "q" } } });
  });

  it.each([
    ["prose", "I think I will read the file"],
    ["unknown kind", '{"kind":"shell","cmd":"rm -rf /"}'],
    ["extra top-level field", '{"kind":"final","text":"done","force":true}'],
    ["two objects", '{"kind":"plan","text":"a"}{"kind":"plan","text":"b"}'],
  ])("%s becomes the invalid_output pseudo-tool with the reason", (_n, text) => {
    const d = decodeJsonAction(text, "s");
    expect(d.kind === "tool" && d.call.name).toBe(INVALID_OUTPUT_TOOL);
    expect(Decision.safeParse(d).success).toBe(true);
  });
});
