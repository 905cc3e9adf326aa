import { describe, expect, it } from "vitest";
import { ReplayFile } from "./decision.js";
import { RunCommandArgs, ToolCall, ToolResult } from "./tool-call.js";

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

  it("run_command takes argv only: 1..64 non-empty words without NUL, a bounded timeout, nothing else", () => {
    const ok = (v: unknown) => RunCommandArgs.safeParse(v).success;
    expect(ok({ argv: ["node", "--check", "src/a.js"] })).toBe(true);
    expect(ok({ argv: ["go", "vet", "./..."], timeout_seconds: 60 })).toBe(true);
    expect(ok({ argv: [] })).toBe(false);
    expect(ok({ argv: "npm run lint" })).toBe(false); // a shell string is not argv
    expect(ok({ argv: ["node", ""] })).toBe(false);
    expect(ok({ argv: ["node", "a\u0000b"] })).toBe(false);
    expect(ok({ argv: ["x".repeat(4097)] })).toBe(false);
    expect(ok({ argv: Array.from({ length: 65 }, () => "a") })).toBe(false);
    expect(ok({ argv: Array.from({ length: 64 }, () => "a") })).toBe(true);
    expect(ok({ argv: ["node"], timeout_seconds: 0 })).toBe(false);
    expect(ok({ argv: ["node"], timeout_seconds: 601 })).toBe(false);
    expect(ok({ argv: ["node"], timeout_seconds: 1.5 })).toBe(false);
    expect(ok({ argv: ["node"], shell: true })).toBe(false);
    expect(ok({ argv: ["node"], env: { X: "1" } })).toBe(false);
  });
});
