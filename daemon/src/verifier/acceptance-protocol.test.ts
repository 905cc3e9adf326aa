import { describe, expect, it } from "vitest";
import { decideCases, parseAcceptanceOutput } from "./acceptance-protocol.js";

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

describe("protocol errors stay bounded whatever the sandbox prints", () => {
  it("regression: 200 cases each with a 1,000-character unrecognized key were all quoted back by the schema error", () => {
    const cases = Array.from({ length: 200 }, (_, i) => ({ ...ok(i % 2 ? "root_ok" : "nested_missing"), [`k${i}${"x".repeat(1_000)}`]: 1 }));
    const r = parseAcceptanceOutput(good(cases), IDS);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error).toMatch(/Unrecognized key/);
      expect(r.error.length).toBeLessThanOrEqual(512);
    }
  });
});

describe("decideCases", () => {
  const c = (id: string, passed: boolean, actual: unknown) => ({ id, passed, actual: actual as never, error: passed ? null : "x" });

  it("passes a case only when the harness passed it AND its answer is the expected one", () => {
    const d = decideCases([c("right", true, [1]), c("wrong", true, [2]), c("failed", false, [1])], { right: [1], wrong: [1], failed: [1] });
    expect(d).toEqual({ passed: ["right"], failed: ["failed", "wrong"], claimed_but_wrong: ["wrong"] });
  });

  it("compares canonically: key order never matters, array order does", () => {
    const expected = { k: { a: 1, b: [1, 2] }, o: [1, 2] };
    expect(decideCases([c("k", true, { b: [1, 2], a: 1 }), c("o", true, [2, 1])], expected)).toMatchObject({ passed: ["k"], failed: ["o"] });
  });

  it("a case with no expected answer never passes", () => {
    expect(decideCases([c("x", true, null)], {}).failed).toEqual(["x"]);
    // an inherited name is not an expected answer either
    expect(decideCases([c("toString", true, null)], {}).failed).toEqual(["toString"]);
  });
});
