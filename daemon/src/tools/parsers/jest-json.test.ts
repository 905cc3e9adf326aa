import { describe, expect, it } from "vitest";
import { parseJestJson } from "./jest-json.js";
import { sampleBytes } from "./samples.testkit.js";

const read = (bytes: Uint8Array | string) => ({ status: "read" as const, bytes: typeof bytes === "string" ? Buffer.from(bytes) : bytes });
const sample = (name: string) => parseJestJson(read(sampleBytes(name)), { maxFailures: 10 });
const counts = (s: ReturnType<typeof parseJestJson>) => ({
  discovered: s.discovered,
  passed: s.passed,
  failed: s.failed,
  skipped: s.skipped,
  todo: s.todo,
  load_error_count: s.load_error_count,
  refusal: s.refusal,
});

describe("parseJestJson on real jest 29.7 --json reports (run in the node sandbox image)", () => {
  it("counts every test of every file: skip is skipped, todo is todo, a duplicate name keeps its worst outcome", () => {
    const s = sample("jest-mixed.json");
    expect(counts(s)).toEqual({ discovered: 9, passed: 5, failed: 2, skipped: 1, todo: 1, load_error_count: 0, refusal: null });
    expect(s.cases).toEqual([
      { id: "tests/mixed.test.js > maths > adds", outcome: "passed" },
      { id: "tests/mixed.test.js > maths > breaks", outcome: "failed" },
      { id: "tests/mixed.test.js > maths > later", outcome: "skipped" },
      { id: "tests/mixed.test.js > maths > someday", outcome: "skipped" },
      { id: "tests/mixed.test.js > maths > nested > deep pass", outcome: "passed" },
      { id: "tests/mixed.test.js > top level", outcome: "passed" },
      { id: "tests/mixed.test.js > same name", outcome: "failed" },
      { id: "tests/ok.test.js > fine", outcome: "passed" },
    ]);
    expect(s.failures[0]).toMatchObject({ name: "maths > breaks", message: expect.stringContaining("Expected: 2") });
  });

  it("a test file that failed to run is a load error named by the file with jest's own lines, never a test", () => {
    const s = sample("jest-load-error.json");
    expect(counts(s)).toEqual({ discovered: 9, passed: 5, failed: 2, skipped: 1, todo: 1, load_error_count: 1, refusal: null });
    expect(s.cases).toContainEqual({ id: "tests/broken.test.js", outcome: "error" });
    expect(s.load_errors).toEqual([{ unit: "tests/broken.test.js", message: expect.stringContaining("Cannot find module './does-not-exist'") }]);
  });
});

describe("parseJestJson refuses what it cannot trust", () => {
  const report = (o: Record<string, unknown> = {}) =>
    JSON.stringify({
      numTotalTests: 1,
      numPassedTests: 1,
      numFailedTests: 0,
      numPendingTests: 0,
      numTodoTests: 0,
      numRuntimeErrorTestSuites: 0,
      testResults: [{ name: "/workspace/t.test.js", status: "passed", message: "", assertionResults: [{ ancestorTitles: [], title: "t", status: "passed" }] }],
      ...o,
    });

  it("totals that disagree with the tests listed: inconsistent", () => {
    expect(parseJestJson(read(report({ numTotalTests: 100 })))).toMatchObject({ refusal: "inconsistent", discovered: 0, cases: [] });
    expect(parseJestJson(read(report({ numPassedTests: 0, numFailedTests: 1 })))).toMatchObject({ refusal: "inconsistent" });
  });

  it("missing, empty, too large, cut short, not JSON, not jest's shape, an unknown status", () => {
    expect(parseJestJson({ status: "missing" })).toMatchObject({ refusal: "missing" });
    expect(parseJestJson(read(" \n"))).toMatchObject({ refusal: "empty" });
    expect(parseJestJson(read(report()), { maxReportBytes: 10 })).toMatchObject({ refusal: "too_large" });
    expect(parseJestJson(read(report().slice(0, 60)))).toMatchObject({ refusal: "truncated" });
    expect(parseJestJson(read("{not json}"))).toMatchObject({ refusal: "unparsable" });
    expect(parseJestJson(read(JSON.stringify({ numTotalTests: "1" })))).toMatchObject({ refusal: "unparsable" });
    expect(parseJestJson(read(report({ numTotalTests: -1 })))).toMatchObject({ refusal: "unparsable" });
    const odd = report()
      .replace('"status":"passed","title"', '"status":"focused","title"')
      .replace('"title":"t","status":"passed"', '"title":"t","status":"focused"');
    expect(parseJestJson(read(odd))).toMatchObject({ refusal: "unparsable" });
  });

  it("accepts a well-formed report and names its file relative to the workspace", () => {
    expect(parseJestJson(read(report()))).toMatchObject({ refusal: null, discovered: 1, passed: 1, cases: [{ id: "t.test.js > t", outcome: "passed" }] });
  });
});
