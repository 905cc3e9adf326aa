import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { TaskSpec } from "./task-spec.js";

const base = {
  schema_version: 1,
  name: "t",
  task: "x",
  writable: ["src/**"],
  test_presets: { u: { command: ["node", "--test"] } },
  verify_preset: "u",
};
const acceptance = (over: Record<string, unknown>) => ({
  ...base,
  acceptance: { command: ["node", "/control/a.mjs"], cases: ["a", "b"], expected: { a: [], b: 1 }, ...over },
});

describe("TaskSpec acceptance", () => {
  it("accepts an expected answer for exactly every case", () => {
    expect(TaskSpec.safeParse(acceptance({})).success).toBe(true);
  });

  it.each([
    ["no expected answers at all", { expected: undefined }, /expected/],
    ["a case without an expected answer", { expected: { a: [] } }, /no expected answer for case\(s\): b/],
    ["an expected answer for an unknown case", { expected: { a: [], b: 1, c: 2 } }, /unknown case\(s\): c/],
    ["a duplicate case id", { cases: ["a", "a", "b"] }, /unique/],
  ])("refuses %s", (_what, over, message) => {
    const r = TaskSpec.safeParse(acceptance(over));
    expect(r.success).toBe(false);
    expect(JSON.stringify(r.error?.issues)).toMatch(message);
  });

  it("the shipped fixtures name an expected answer for each hidden case", () => {
    const fixtures = path.resolve(import.meta.dirname, "../../../fixtures");
    for (const name of fs.readdirSync(fixtures)) {
      const file = path.join(fixtures, name, "task.json");
      if (!fs.existsSync(file)) continue;
      const t = TaskSpec.parse(JSON.parse(fs.readFileSync(file, "utf8")));
      if (t.acceptance) expect(Object.keys(t.acceptance.expected).sort()).toEqual([...t.acceptance.cases].sort());
    }
  });
});
