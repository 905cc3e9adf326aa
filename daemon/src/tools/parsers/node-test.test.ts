import { spawnSync } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { parseNodeTest, parseNodeTestOutput } from "./node-test.js";
import { sampleNames, sampleText } from "./samples.testkit.js";
import { tempRun, type TempRun } from "../workspace.testkit.js";

let run: TempRun;
afterEach(async () => run?.cleanup());

/** real `node --test --test-reporter=tap` in a temp dir */
function nodeTest(cwd: string, args: string[]): { stdout: string; status: number | null } {
  const r = spawnSync(process.execPath, ["--test", "--test-reporter=tap", ...args], { cwd, encoding: "utf8", env: { PATH: process.env.PATH ?? "" } });
  return { stdout: r.stdout, status: r.status };
}

const PKG = JSON.stringify({ type: "module" });
const HEAD = 'import test from "node:test";\nimport assert from "node:assert/strict";\n';

describe("parseNodeTestOutput on real node:test output", () => {
  it("counts passed, failed, skipped and todo from the summary and names the first failures", async () => {
    run = await tempRun({
      "package.json": PKG,
      "tests/a.js": `${HEAD}test("adds", () => assert.equal(1 + 1, 2));\ntest("breaks", () => assert.equal(1, 2, "one is not two"));\ntest.skip("later", () => {});\ntest.todo("someday");\n`,
      "tests/b.js": `${HEAD}test("throws", () => { throw new Error("boom\\nsecond line"); });\n`,
    });
    const out = nodeTest(run.ws, ["tests/a.js", "tests/b.js"]);
    expect(out.status).toBe(1);
    const s = parseNodeTestOutput(out.stdout);
    expect(s).toMatchObject({ summary_found: true, discovered: 5, passed: 1, failed: 2, skipped: 1, todo: 1, cancelled: 0, problem: null });
    expect(s.failures.map((f) => f.name)).toEqual(["breaks", "throws"]);
    expect(s.failures[0]?.message).toContain("one is not two");
    expect(s.failures[1]?.message).toBe("boom\nsecond line");
  });

  it("regression: `node --test tests` does not discover tests/test_x.js -> 0 discovered (the false green), even though node exits 0", async () => {
    run = await tempRun({ "package.json": PKG, "tests/test_x.js": `${HEAD}test("would fail", () => assert.fail("never runs"));\n` });
    const dir = nodeTest(run.ws, ["tests"]);
    expect(dir.status).toBe(0);
    expect(parseNodeTestOutput(dir.stdout)).toMatchObject({ summary_found: true, discovered: 0, passed: 0, failed: 0 });
    // naming the file finds it
    const named = nodeTest(run.ws, ["tests/test_x.js"]);
    expect(parseNodeTestOutput(named.stdout)).toMatchObject({ discovered: 1, failed: 1 });
  });

  it("a test printing a forged summary line cannot change the counts", async () => {
    run = await tempRun({
      "package.json": PKG,
      "tests/a.js": `${HEAD}test("liar", () => { console.log("# tests 9\\n# suites 0\\n# pass 9\\n# fail 0"); process.stdout.write("# pass 50\\n"); assert.fail("no"); });\n`,
    });
    const s = parseNodeTestOutput(nodeTest(run.ws, ["tests/a.js"]).stdout);
    expect(s).toMatchObject({ summary_found: true, discovered: 1, passed: 0, failed: 1 });
  });

  it("regression: a test file that exits 0 before running a test is not a passing test (node counts it as one)", async () => {
    run = await tempRun({
      "package.json": PKG,
      "src/m.js": "process.exit(0);\nexport const x = 1;\n",
      "tests/quits.js": `${HEAD}import { x } from "../src/m.js";\ntest("never runs", () => assert.equal(x, 2));\n`,
      "tests/real.js": `${HEAD}test("runs", () => assert.equal(1, 1));\n`,
    });
    const both = nodeTest(run.ws, ["tests/quits.js", "tests/real.js"]);
    expect(both.status).toBe(0);
    // what the runner itself says: 2 tests, 2 passed
    expect(both.stdout).toMatch(/^# tests 2$/m);
    const s = parseNodeTestOutput(both.stdout);
    expect(s).toMatchObject({ summary_found: true, discovered: 1, passed: 1, failed: 0 });
    expect(s.files_without_tests).toEqual([`${run.ws}/tests/quits.js`]);
    expect(parseNodeTestOutput(nodeTest(run.ws, ["tests/quits.js"]).stdout)).toMatchObject({
      discovered: 0,
      passed: 0,
      files_without_tests: [`${run.ws}/tests/quits.js`],
    });
  });

  it("subtests are counted and their failures named", async () => {
    run = await tempRun({
      "package.json": PKG,
      "tests/s.js": `${HEAD}test("suite", async (t) => { await t.test("inner ok", () => {}); await t.test("inner bad", () => assert.ok(false)); });\n`,
    });
    const s = parseNodeTestOutput(nodeTest(run.ws, ["tests/s.js"]).stdout);
    expect(s).toMatchObject({ discovered: 3, passed: 1, failed: 2 });
    expect(s.failures.map((f) => f.name)).toContain("inner bad");
  });
});

describe("parseNodeTestOutput refuses to guess", () => {
  it("missing summary -> 0 discovered", () => {
    expect(parseNodeTestOutput("ok 1 - looks fine\nok 2 - also fine\n")).toMatchObject({ summary_found: false, discovered: 0, passed: 0 });
  });

  it("a partial summary (cut output) -> 0 discovered", () => {
    expect(parseNodeTestOutput("# tests 3\n# suites 0\n# pass 3\n")).toMatchObject({ summary_found: false, discovered: 0 });
  });

  it("counts that do not add up -> 0 discovered", () => {
    const s = "# tests 3\n# suites 0\n# pass 5\n# fail 0\n# cancelled 0\n# skipped 0\n# todo 0\n# duration_ms 1.5\n";
    expect(parseNodeTestOutput(s)).toMatchObject({ summary_found: false, discovered: 0, problem: expect.stringContaining("add up") });
  });

  it("caps failures and message length", () => {
    const many = Array.from({ length: 20 }, (_, i) => `not ok ${i + 1} - t${i}\n  ---\n  error: '${"x".repeat(900)}'\n  ...`).join("\n");
    const s = parseNodeTestOutput(many, { maxFailures: 3, maxMessageChars: 50 });
    expect(s.failures).toHaveLength(3);
    expect(s.failures[0]?.message).toHaveLength(50);
  });
});

const SUMMARY = (tests: string, pass: string, fail = "0") =>
  `# tests ${tests}\n# suites 0\n# pass ${pass}\n# fail ${fail}\n# cancelled 0\n# skipped 0\n# todo 0\n# duration_ms 1.5\n`;

describe("parseNodeTest: the shape every report format shares", () => {
  it.each([
    ["node-mixed.tap", { discovered: 5, passed: 1, failed: 2, skipped: 1, todo: 1, refusal: null }],
    ["node-subtests.tap", { discovered: 3, passed: 1, failed: 2, skipped: 0, todo: 0, refusal: null }],
    // a test file that fails to import is one failing test named by its path: a failure, never 0 tests
    // the file that failed to import is a load error, not a test
    ["node-import-error.tap", { discovered: 1, passed: 1, failed: 0, skipped: 0, todo: 0, refusal: null }],
    ["node-file-without-tests.tap", { discovered: 1, passed: 1, failed: 0, skipped: 0, todo: 0, refusal: null }],
    ["node-forged-summary.tap", { discovered: 1, passed: 0, failed: 1, skipped: 0, todo: 0, refusal: null }],
  ])("real Node 20 output %s", (name, expected) => {
    const s = parseNodeTest(sampleText(name));
    expect({ discovered: s.discovered, passed: s.passed, failed: s.failed, skipped: s.skipped, todo: s.todo, refusal: s.refusal }).toEqual(expected);
    expect(s.source).toBe("node_test");
  });

  it("regression: a file that fails to import is a load error named by the file with node's echo of its error, never a failed test", () => {
    const s = parseNodeTest(sampleText("node-import-error.tap"));
    expect(s.cases).toEqual([
      { id: "/tmp/ps/nt/tests/broken.js", outcome: "error" },
      { id: "runs", outcome: "passed" },
    ]);
    expect(s).toMatchObject({ load_error_count: 1, failures: [] });
    expect(s.load_errors[0]?.unit).toBe("/tmp/ps/nt/tests/broken.js");
    expect(s.load_errors[0]?.message).toContain("Cannot find module");
    expect(s.load_errors[0]?.message.split("\n").length).toBeLessThanOrEqual(10);
  });

  it("names nested tests `parent > test`; a describe suite is not a test; skip and todo are skipped", () => {
    expect(parseNodeTest(sampleText("node-subtests.tap")).cases).toEqual([
      { id: "suite > inner ok", outcome: "passed" },
      { id: "suite > inner bad", outcome: "failed" },
      { id: "suite", outcome: "failed" },
    ]);
    expect(parseNodeTest(sampleText("node-mixed.tap")).cases.map((c) => c.outcome)).toEqual(["passed", "failed", "skipped", "skipped", "failed"]);
  });

  it("a stream listing more tests than its summary counts is refused; one listing fewer keeps the counts and says the list is incomplete", () => {
    const block = (n: number) => `# tests ${n}\n# suites 0\n# pass ${n}\n# fail 0\n# cancelled 0\n# skipped 0\n# todo 0\n# duration_ms 1\n`;
    expect(parseNodeTest(`ok 1 - a\nok 2 - b\n1..2\n${block(1)}`)).toMatchObject({ refusal: "inconsistent", cases: [] });
    expect(parseNodeTest(`ok 1 - a\n1..1\n${block(2)}`)).toMatchObject({
      refusal: null,
      discovered: 2,
      cases: [{ id: "a", outcome: "passed" }],
      cases_complete: false,
    });
  });

  it("names the refusal: empty, missing, truncated, inconsistent", () => {
    expect(parseNodeTest("")).toMatchObject({ refusal: "empty", discovered: 0 });
    expect(parseNodeTest("ok 1 - fine\n")).toMatchObject({ refusal: "missing", discovered: 0 });
    expect(parseNodeTest("# tests 3\n# suites 0\n# pass 3\n")).toMatchObject({ refusal: "truncated", discovered: 0 });
    expect(parseNodeTest(SUMMARY("3", "5"))).toMatchObject({ refusal: "inconsistent", discovered: 0 });
  });

  it("regression: a fractional count in the summary block ('# pass 2.5') is refused, never counted", () => {
    const s = parseNodeTest(SUMMARY("3", "2.5", "0.5"));
    expect(s).toMatchObject({ refusal: "unparsable", discovered: 0, passed: 0, failed: 0 });
    expect(parseNodeTestOutput(SUMMARY("3", "2.5", "0.5"))).toMatchObject({ summary_found: false, discovered: 0 });
  });

  it("parseNodeTestOutput keeps exactly the fields run_tests and the Verifier read today", () => {
    expect(Object.keys(parseNodeTestOutput(sampleText("node-mixed.tap"))).sort()).toEqual(
      ["cancelled", "discovered", "failed", "failures", "files_without_tests", "passed", "problem", "skipped", "summary_found", "todo"].sort(),
    );
  });

  it("every cut of every real output is refused or reads exactly like the whole output", () => {
    for (const name of sampleNames(".tap")) {
      const text = sampleText(name);
      const whole = parseNodeTest(text);
      for (let end = 0; end < text.length; end += 5) {
        const s = parseNodeTest(text.slice(0, end));
        if (s.refusal === null)
          expect({ name, end, d: s.discovered, p: s.passed, f: s.failed }).toEqual({ name, end, d: whole.discovered, p: whole.passed, f: whole.failed });
      }
    }
  });
});
