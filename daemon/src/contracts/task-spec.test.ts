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

describe("TaskSpec SWE-bench fields (FAIL_TO_PASS, PASS_TO_PASS, hidden_tests)", () => {
  const junit = { ...base, test_presets: { u: { command: ["python3", "-m", "pytest"], parser: "junit_xml" } } };
  it("accepts pytest node ids and a control folder for the hidden tests", () => {
    const r = TaskSpec.safeParse({ ...junit, FAIL_TO_PASS: ["tests/test_x.py::TestC::test_y[a-1]"], PASS_TO_PASS: [], hidden_tests: "hidden_tests" });
    expect(r.success).toBe(true);
  });

  it.each([
    ["an empty id", { FAIL_TO_PASS: [""] }, "FAIL_TO_PASS"],
    ["an id over 512 characters", { PASS_TO_PASS: ["t".repeat(513)] }, "PASS_TO_PASS"],
    ["a list over 20,000 ids", { PASS_TO_PASS: Array.from({ length: 20_001 }, (_, i) => `t${i}`) }, "PASS_TO_PASS"],
    ["hidden_tests escaping the control dir", { hidden_tests: "../repo" }, "hidden_tests"],
    ["an absolute hidden_tests", { hidden_tests: "/etc" }, "hidden_tests"],
    ["a hidden_tests with an empty part", { hidden_tests: "a//b" }, "hidden_tests"],
    ["an unknown SWE-bench field", { FAIL_TO_FAIL: ["x"] }, ""],
  ])("refuses %s", (_what, over, field) => {
    const r = TaskSpec.safeParse({ ...junit, ...over });
    expect(r.success).toBe(false);
    if (field !== "") expect(r.error?.issues.some((i) => i.path[0] === field)).toBe(true);
  });

  it("refuses FAIL_TO_PASS with an exit-code verify preset: an exit status names no test, so the list could never pass", () => {
    const r = TaskSpec.safeParse({ ...base, test_presets: { u: { command: ["make", "test"], parser: "exit_code" } }, FAIL_TO_PASS: ["t"] });
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]?.message).toMatch(/parser names tests/);
  });
});
