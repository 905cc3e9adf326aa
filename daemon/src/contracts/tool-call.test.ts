import { describe, expect, it } from "vitest";
import { ReplayFile } from "./decision.js";
import { ToolCall, ToolResult } from "./tool-call.js";

describe("tool protocol contracts", () => {
  it("regression: an own __proto__ key in arguments is refused, not silently dropped by the record", () => {
    const raw = '{"schema_version":1,"decisions":[{"kind":"tool","call":{"call_id":"c","name":"read_file","arguments":{"path":"a","__proto__":{"x":1}}}}]}';
    expect(ReplayFile.safeParse(JSON.parse(raw)).success).toBe(false);
    expect(ToolCall.safeParse({ call_id: "c", name: "read_file", arguments: { path: "a" } }).success).toBe(true);
  });

  it("ToolResult: ok=false needs an error code, ok=true needs error=null, no extra fields", () => {
    expect(ToolResult.safeParse({ call_id: "c", ok: false, data: null, error: null, truncated: false }).success).toBe(false);
    expect(ToolResult.safeParse({ call_id: "c", ok: true, data: 1, error: { code: "internal", message: "x" }, truncated: false }).success).toBe(false);
    expect(ToolResult.safeParse({ call_id: "c", ok: true, data: 1, error: null, truncated: false, extra: 1 }).success).toBe(false);
    expect(ToolResult.safeParse({ call_id: "c", ok: false, data: null, error: { code: "stale_version", message: "re-read" }, truncated: false }).success).toBe(
      true,
    );
  });
});
