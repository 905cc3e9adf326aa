/**
 * Synthetic reports of N tests in every format, shaped like the real samples
 * (pytest xunit1 with file=, node nested subtests, go -json events, jest --json):
 * every tenth test fails with a 20-line trace. Shared by the 7,000-test unit
 * tests and scripts/bench-parsers.ts, so the size measured is the size tested.
 */
const TRACE = "E   assert 1 == 2\n".repeat(20);
const FAILS = (i: number) => i % 10 === 0;

export const failedOf = (n: number): number => Math.ceil(n / 10);

/** pytest (junit_family=xunit1): 100 tests per module, ids `tests/test_mN.py::TestK::test_i` */
export function pytestJunit(n: number): Buffer {
  const cases: string[] = [];
  for (let i = 0; i < n; i++) {
    const m = Math.floor(i / 100);
    const attrs = `classname="tests.test_m${m}.TestK" name="test_${i}" file="tests/test_m${m}.py" line="${i}" time="0.001"`;
    cases.push(FAILS(i) ? `<testcase ${attrs}><failure message="assert 1 == 2">${TRACE}</failure></testcase>` : `<testcase ${attrs}/>`);
  }
  const f = failedOf(n);
  return Buffer.from(
    `<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="${f}" skipped="0" tests="${n}">${cases.join("")}</testsuite></testsuites>\n`,
  );
}

export function goJson(n: number): string {
  const pkg = "example.com/m/p";
  const lines: string[] = [];
  const ev = (o: object) => lines.push(JSON.stringify({ Time: "2026-01-01T00:00:00Z", Package: pkg, ...o }));
  for (let i = 0; i < n; i++) {
    const test = `Test${i}`;
    ev({ Action: "run", Test: test });
    ev({ Action: "output", Test: test, Output: `=== RUN   ${test}\n` });
    if (FAILS(i)) for (const l of TRACE.split("\n").slice(0, 20)) ev({ Action: "output", Test: test, Output: `    x_test.go:9: ${l}\n` });
    ev({ Action: FAILS(i) ? "fail" : "pass", Test: test, Elapsed: 0 });
  }
  ev({ Action: "fail", Elapsed: 1 });
  return `${lines.join("\n")}\n`;
}

/** node:test TAP: suites of 10 subtests (`suite N > t i`); a suite with subtests counts as a test, as node counts it */
export function nodeTap(n: number): string {
  const lines = ["TAP version 13"];
  let failed = 0;
  let tests = 0;
  for (let s = 0; tests < n; s++) {
    const inner = Math.min(10, n - tests - 1);
    lines.push(`# Subtest: suite ${s}`);
    let suiteFailed = false;
    for (let k = 0; k < inner; k++) {
      const i = tests + k;
      const bad = FAILS(i);
      if (bad) failed++;
      suiteFailed ||= bad;
      lines.push(`    # Subtest: t ${i}`, `    ${bad ? "not ok" : "ok"} ${k + 1} - t ${i}`, "      ---", "      duration_ms: 0.1");
      if (bad)
        lines.push(
          "      error: |-",
          ...TRACE.trim()
            .split("\n")
            .map((l) => `        ${l}`),
        );
      lines.push("      ...");
    }
    if (inner > 0) lines.push(`    1..${inner}`);
    if (suiteFailed) failed++;
    lines.push(`${suiteFailed ? "not ok" : "ok"} ${s + 1} - suite ${s}`, "  ---", "  duration_ms: 1", "  ...");
    tests += inner + 1;
  }
  lines.push(`# tests ${n}`, "# suites 0", `# pass ${n - failed}`, `# fail ${failed}`, "# cancelled 0", "# skipped 0", "# todo 0", "# duration_ms 1.5");
  return `${lines.join("\n")}\n`;
}

/** jest --json: 100 tests per file, as jest 29 writes each result */
export function jestJson(n: number): Buffer {
  const files: { name: string; status: string; message: string; assertionResults: object[] }[] = [];
  for (let i = 0; i < n; i++) {
    const m = Math.floor(i / 100);
    if (files[m] === undefined) files[m] = { name: `/workspace/tests/m${m}.test.js`, status: "passed", message: "", assertionResults: [] };
    const bad = FAILS(i);
    if (bad) files[m]!.status = "failed";
    files[m]!.assertionResults.push({
      ancestorTitles: ["module", `group ${m}`],
      duration: 1,
      failureDetails: [],
      failureMessages: bad ? [TRACE] : [],
      fullName: `module group ${m} test ${i}`,
      invocations: 1,
      location: null,
      numPassingAsserts: bad ? 0 : 1,
      retryReasons: [],
      status: bad ? "failed" : "passed",
      title: `test ${i}`,
    });
  }
  const f = failedOf(n);
  return Buffer.from(
    JSON.stringify({
      numFailedTests: f,
      numPassedTests: n - f,
      numPendingTests: 0,
      numRuntimeErrorTestSuites: 0,
      numTodoTests: 0,
      numTotalTests: n,
      success: f === 0,
      testResults: files,
    }),
  );
}
