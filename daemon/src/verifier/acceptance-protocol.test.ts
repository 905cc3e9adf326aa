import { describe, expect, it } from "vitest";
import { parseAcceptanceOutput } from "./acceptance-protocol.js";

const IDS = ["nested_missing", "root_ok"];
const good = (cases: unknown[]) => JSON.stringify({ schema_version: 1, cases });
const ok = (id: string, passed = true) => ({ id, passed, actual: passed ? [] : ["docs/x.md"], error: passed ? null : "expected no broken links" });

describe("parseAcceptanceOutput", () => {
  it("accepts exactly the expected cases and splits passed from failed", () => {
    const r = parseAcceptanceOutput(`${good([ok("root_ok"), ok("nested_missing", false)])}\n`, IDS);
    expect(r).toMatchObject({ ok: true, passed: ["root_ok"], failed: ["nested_missing"] });
  });

  const refused: Array<[string, string]> = [
    ["an extra field on a case", good([{ ...ok("root_ok"), score: 1 }, ok("nested_missing")])],
    ["an extra top-level field", JSON.stringify({ schema_version: 1, cases: [ok("root_ok"), ok("nested_missing")], note: "hi" })],
    ["a missing field (actual)", good([{ id: "root_ok", passed: true, error: null }, ok("nested_missing")])],
    ["a mistyped field (passed as a string)", good([{ ...ok("root_ok"), passed: "true" }, ok("nested_missing")])],
    ["a missing case", good([ok("root_ok")])],
    ["an unknown case id", good([ok("root_ok"), ok("nested_missing"), ok("surprise")])],
    ["a duplicate case id", good([ok("root_ok"), ok("root_ok"), ok("nested_missing")])],
    ["another schema version", JSON.stringify({ schema_version: 2, cases: [ok("root_ok"), ok("nested_missing")] })],
    ["passed=true carrying an error", good([{ ...ok("root_ok"), error: "boom" }, ok("nested_missing")])],
    ["chatter before the JSON", `all good!\n${good([ok("root_ok"), ok("nested_missing")])}`],
    ["empty stdout", ""],
  ];
  for (const [what, stdout] of refused) {
    it(`refuses ${what} as a protocol error`, () => {
      const r = parseAcceptanceOutput(stdout, IDS);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.error.length).toBeGreaterThan(0);
    });
  }
});
