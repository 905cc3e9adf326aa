import { describe, expect, it } from "vitest";
import { validateToolCall } from "./validate.js";

describe("validateToolCall", () => {
  it("accepts a well-formed call and returns a copy the proposer cannot change afterwards", () => {
    const raw = { call_id: "c1", name: "read_file", arguments: { path: "src/a.js", start: 2 } };
    const v = validateToolCall(raw);
    expect(v.ok).toBe(true);
    if (!v.ok) return;
    raw.arguments.path = "../../etc/passwd";
    expect(v.args).toEqual({ path: "src/a.js", start: 2 });
    expect(v.call.arguments).toEqual({ path: "src/a.js", start: 2 });
    expect(v.call.arguments).not.toBe(v.args);
  });

  it("unknown tool -> unknown_tool with the call id kept", () => {
    const v = validateToolCall({ call_id: "c2", name: "delete_file", arguments: { path: "notes.txt" } });
    expect(v.ok).toBe(false);
    if (!v.ok) {
      expect(v.result).toMatchObject({ call_id: "c2", ok: false, error: { code: "unknown_tool" } });
      expect(v.result.error?.message).toContain("read_file");
    }
  });

  it.each([
    ["extra top-level field", { call_id: "c", name: "read_file", arguments: { path: "a" }, why: "x" }, "why"],
    ["extra argument field", { call_id: "c", name: "read_file", arguments: { path: "a", mode: "raw" } }, "arguments"],
    ["missing argument", { call_id: "c", name: "apply_patch", arguments: { path: "a", old: "x", new: "y" } }, "version"],
    ["mistyped argument", { call_id: "c", name: "read_file", arguments: { path: "a", start: "1" } }, "start"],
    ["float where an int belongs", { call_id: "c", name: "read_file", arguments: { path: "a", start: 1.5 } }, "start"],
    ["version that is not SHA-256", { call_id: "c", name: "apply_patch", arguments: { path: "a", version: "abc", old: "", new: "" } }, "version"],
    ["arguments on show_diff", { call_id: "c", name: "show_diff", arguments: { all: true } }, "all"],
    ["missing call_id", { name: "show_diff", arguments: {} }, "call_id"],
    ["not an object", "read_file src/a.js", ""],
  ])("%s -> invalid_fields naming the path", (_title, raw, mention) => {
    const v = validateToolCall(raw);
    expect(v.ok).toBe(false);
    if (!v.ok) {
      expect(v.result.error?.code).toBe("invalid_fields");
      expect(v.result.error?.message).toContain(mention);
      expect(v.result.ok).toBe(false);
    }
  });

  it("regression: an own __proto__ key in the arguments (as JSON.parse makes it) is an extra field, not silently dropped", () => {
    const v = validateToolCall(JSON.parse('{"call_id":"c","name":"read_file","arguments":{"path":"a","__proto__":{"x":1}}}'));
    expect(v.ok).toBe(false);
    if (!v.ok) expect(v.result.error).toMatchObject({ code: "invalid_fields", message: expect.stringContaining("__proto__") });
  });

  it("a getter on the proposal cannot make validation run code twice with different answers", () => {
    let reads = 0;
    const args = {
      get path() {
        reads++;
        return reads === 1 ? "src/a.js" : "../escape";
      },
    };
    const v = validateToolCall({ call_id: "c", name: "read_file", arguments: args });
    // whatever was validated is what is returned; later reads of the getter do not leak in
    expect(v.ok).toBe(true);
    if (v.ok) {
      expect((v.args as { path: string }).path).toBe("src/a.js");
      expect(v.call.arguments.path).toBe("src/a.js");
    }
  });
});
