import { describe, expect, it } from "vitest";
import { LoadError, MAX_CASES, TestCase, TestReportKind } from "../../contracts/test-report.js";
import { parserFor, REFUSAL_KINDS, REPORT_PARSE_DEFAULTS, type RefusalKind, type RunnerEvidence, type TestReportSummary } from "./index.js";
import { failedOf, goJson, jestJson, nodeTap, pytestJunit } from "./generated.testkit.js";
import { goStderr, sampleBytes, sampleNames, sampleText } from "./samples.testkit.js";

const junit = (xml: string | Uint8Array): RunnerEvidence => ({
  stdout: "",
  stderr: "",
  report: { status: "read", bytes: typeof xml === "string" ? Buffer.from(xml) : xml },
});
const out = (stdout: string, stderr = ""): RunnerEvidence => ({ stdout, stderr });

/** every real sample, as the evidence its parser reads */
function allSamples(): { kind: TestReportKind; name: string; evidence: RunnerEvidence }[] {
  return [
    ...sampleNames(".tap").map((name) => ({ kind: "node_test" as const, name, evidence: out(sampleText(name)) })),
    ...sampleNames(".xml").map((name) => ({ kind: "junit_xml" as const, name, evidence: junit(sampleBytes(name)) })),
    ...sampleNames(".stdout").map((name) => ({ kind: "go_test_json" as const, name, evidence: out(sampleText(name), goStderr(name)) })),
    ...sampleNames(".json").map((name) => ({ kind: "jest_json" as const, name, evidence: junit(sampleBytes(name)) })),
  ];
}

/** What every summary from every parser must satisfy, whatever the input. */
function expectInvariants(s: TestReportSummary, kind: TestReportKind, maxFailures: number): void {
  expect(s.source).toBe(kind);
  for (const n of [s.discovered, s.passed, s.failed, s.cancelled, s.skipped, s.todo, s.errors]) expect(Number.isSafeInteger(n) && n >= 0).toBe(true);
  expect(s.failures.length).toBeLessThanOrEqual(maxFailures);
  if (s.refusal === null) {
    expect(s.summary_found).toBe(true);
    expect(s.problem).toBeNull();
    expect(s.passed + s.failed + s.cancelled + s.skipped + s.todo).toBe(s.discovered);
    expect(s.errors).toBeLessThanOrEqual(s.failed);
    // a package that failed to build is a load error, never a test
    expect(s.build_failed.length).toBeLessThanOrEqual(s.load_error_count);
    // ids are unique, bounded and free of control characters; load errors are `error` cases and only they are
    const ids = s.cases.map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const c of s.cases) expect(TestCase.safeParse(c).success && !/[\u0000-\u001f\u007f-\u009f]/.test(c.id)).toBe(true);
    expect(s.cases.filter((c) => c.outcome === "error").length).toBeLessThanOrEqual(s.load_error_count);
    expect(s.load_errors.length).toBe(Math.min(s.load_error_count, 20));
    for (const e of s.load_errors) expect(LoadError.safeParse(e).success && e.message.split("\n").length <= 10 && e.message.length <= 1000).toBe(true);
    // duplicates merge, so the list is never longer than the tests plus the load errors
    expect(s.cases.length).toBeLessThanOrEqual(s.discovered + s.load_error_count);
    // an empty list for counted tests is never called complete (a merged duplicate may make it shorter)
    if (s.discovered > 0 && s.cases.length === 0) expect(s.cases_complete).toBe(false);
  } else {
    expect(REFUSAL_KINDS).toContain(s.refusal);
    expect(s).toMatchObject({
      summary_found: false,
      discovered: 0,
      passed: 0,
      failed: 0,
      cancelled: 0,
      skipped: 0,
      todo: 0,
      errors: 0,
      build_failed: [],
      files_without_tests: [],
      cases: [],
      cases_complete: false,
      load_error_count: 0,
      load_errors: [],
    });
    expect(typeof s.problem === "string" && s.problem.length > 0).toBe(true);
  }
}

describe("parserFor", () => {
  it("each kind reads its own evidence: node_test and go_test_json stdout, junit_xml only the report file", () => {
    const junitOnStdout = '<testsuites><testsuite tests="1"><testcase name="t"/></testsuite></testsuites>\n';
    // a JUnit report printed on stdout is not the report file
    expect(parserFor("junit_xml")(out(junitOnStdout))).toMatchObject({ refusal: "missing", discovered: 0 });
    expect(parserFor("junit_xml")({ ...out(""), report: { status: "read", bytes: Buffer.from(junitOnStdout) } })).toMatchObject({
      refusal: null,
      discovered: 1,
    });
    expect(parserFor("node_test")(out(sampleText("node-mixed.tap")))).toMatchObject({ source: "node_test", discovered: 5 });
    expect(parserFor("go_test_json")(out(sampleText("go-pass.stdout")))).toMatchObject({ source: "go_test_json", discovered: 2 });
  });

  it("every kind the contracts name has a parser", () => {
    for (const kind of TestReportKind.options) expect(typeof parserFor(kind)).toBe("function");
  });
});

describe("what a skipped test is: the same in every format", () => {
  // A skipped test (node skip, JUnit <skipped>, pytest xfail, go t.Skip) was registered
  // and not run to an outcome: it is in `skipped`, never in `passed` or `failed`.
  // Whether a run with skips is green is the verdict rule's call, made once from these fields.
  it.each([
    [
      "node_test",
      out("TAP version 13\nok 1 - later # SKIP\n1..1\n# tests 1\n# suites 0\n# pass 0\n# fail 0\n# cancelled 0\n# skipped 1\n# todo 0\n# duration_ms 1\n"),
    ],
    [
      "junit_xml",
      junit('<testsuites><testsuite tests="1" skipped="1"><testcase name="later"><skipped message="not today"/></testcase></testsuite></testsuites>'),
    ],
    [
      "go_test_json",
      out(
        [
          { Action: "run", Package: "p", Test: "TestLater" },
          { Action: "skip", Package: "p", Test: "TestLater" },
          { Action: "pass", Package: "p" },
        ]
          .map((e) => JSON.stringify(e))
          .join("\n") + "\n",
      ),
    ],
  ] as const)("%s: a run whose only test is skipped has 1 discovered, 0 passed, 1 skipped", (kind, evidence) => {
    expect(parserFor(kind)(evidence)).toMatchObject({ refusal: null, discovered: 1, passed: 0, failed: 0, skipped: 1 });
  });

  it.each([
    ["node_test", "node-mixed.tap", { passed: 1, skipped: 1, todo: 1 }],
    ["junit_xml", "junit-pytest-mixed.xml", { passed: 2, skipped: 2, todo: 0 }],
    ["junit_xml", "junit-vitest-mixed.xml", { passed: 4, skipped: 2, todo: 0 }],
    ["junit_xml", "junit-jest-mixed.xml", { passed: 2, skipped: 1, todo: 0 }],
    ["go_test_json", "go-skip.stdout", { passed: 1, skipped: 1, todo: 0 }],
    ["go_test_json", "go-sub.stdout", { passed: 6, skipped: 1, todo: 0 }],
  ] as const)("%s, real %s: skips are counted apart from passes", (kind, name, expected) => {
    const ev = kind === "junit_xml" ? junit(sampleBytes(name)) : out(sampleText(name), goStderr(name));
    expect(parserFor(kind)(ev)).toMatchObject(expected);
  });
});

describe("every parser is total and keeps the invariants", () => {
  it("on every real sample", () => {
    for (const { kind, name, evidence } of allSamples()) {
      const s = parserFor(kind)(evidence);
      expect.soft(s.source, name).toBe(kind);
      expectInvariants(s, kind, 5);
    }
  });

  it("on thousands of damaged samples (seeded: cuts, flipped bytes, repeated and dropped slices) it never throws", () => {
    let seed = 42;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const damage = (b: Buffer): Buffer => {
      const copy = Buffer.from(b);
      switch (rand(4)) {
        case 0:
          return copy.subarray(rand(copy.length + 1));
        case 1:
          for (let k = 0; k < 1 + rand(8); k++) if (copy.length > 0) copy[rand(copy.length)] = rand(256);
          return copy;
        case 2: {
          const at = rand(copy.length + 1);
          return Buffer.concat([copy.subarray(0, at), copy.subarray(rand(at + 1), at), copy.subarray(at)]);
        }
        default: {
          const at = rand(copy.length + 1);
          return Buffer.concat([copy.subarray(0, at), copy.subarray(Math.min(copy.length, at + rand(200)))]);
        }
      }
    };
    for (const { kind, evidence } of allSamples()) {
      const original = kind === "junit_xml" && evidence.report?.status === "read" ? Buffer.from(evidence.report.bytes) : Buffer.from(evidence.stdout);
      for (let i = 0; i < 150; i++) {
        const bytes = damage(original);
        const ev = kind === "junit_xml" ? junit(bytes) : out(bytes.toString("utf8"), evidence.stderr);
        expectInvariants(parserFor(kind)(ev, { maxFailures: 3 }), kind, 3);
      }
    }
  });
});

describe("each refusal kind, through the registry", () => {
  const cut = (name: string) => sampleBytes(name).subarray(0, Math.floor(sampleBytes(name).length / 2));
  const cases: [RefusalKind, TestReportKind, RunnerEvidence][] = [
    ["missing", "junit_xml", out("")],
    ["missing", "node_test", out("ok 1 - fine\n")],
    ["empty", "junit_xml", junit("")],
    ["empty", "node_test", out("")],
    ["empty", "go_test_json", out("")],
    ["too_large", "junit_xml", { ...out(""), report: { status: "too_large", size: null } }],
    ["too_large", "junit_xml", junit(Buffer.alloc(REPORT_PARSE_DEFAULTS.maxReportBytes + 1, 0x20))],
    ["unreadable", "junit_xml", { ...out(""), report: { status: "unreadable", reason: "a FIFO, not a regular file" } }],
    ["truncated", "junit_xml", junit(cut("junit-vitest-mixed.xml"))],
    ["truncated", "node_test", out("# tests 2\n# suites 0\n# pass 2\n")],
    ["truncated", "go_test_json", out(cut("go-pass.stdout").toString("utf8"))],
    ["unparsable", "junit_xml", junit("<html><body>all green</body></html>")],
    ["unparsable", "go_test_json", out("PASS\nok  \tp\t0.1s\n")],
    ["unparsable", "node_test", out("# tests 1\n# suites 0\n# pass 0.5\n# fail 0.5\n# cancelled 0\n# skipped 0\n# todo 0\n# duration_ms 1\n")],
    ["inconsistent", "junit_xml", junit('<testsuites tests="100"><testsuite><testcase name="t"/></testsuite></testsuites>')],
    ["inconsistent", "node_test", out("# tests 1\n# suites 0\n# pass 9\n# fail 0\n# cancelled 0\n# skipped 0\n# todo 0\n# duration_ms 1\n")],
  ];

  it("every kind is produced by at least one format", () => {
    expect(new Set(cases.map(([k]) => k))).toEqual(new Set(REFUSAL_KINDS));
  });

  it.each(cases)("%s from %s", (refusal, kind, evidence) => {
    const s = parserFor(kind)(evidence);
    expect(s.refusal).toBe(refusal);
    expectInvariants(s, kind, 5);
  });
});

describe("a 7,000-test suite is judged from its report, in every format", () => {
  const N = 7_000;
  it.each([
    ["junit_xml (pytest xunit1)", "junit_xml", () => junit(pytestJunit(N)), "tests/test_m69.py::TestK::test_6999", failedOf(N)],
    ["jest_json", "jest_json", () => junit(jestJson(N)), "tests/m69.test.js > module > group 69 > test 6999", failedOf(N)],
    ["go_test_json", "go_test_json", () => out(goJson(N)), "example.com/m/p/Test6999", failedOf(N)],
    ["node_test", "node_test", () => out(nodeTap(N)), "suite 636", null],
  ] as const)("%s: counts and the list are exact, ids unique", (_label, kind, evidence, lastId, failed) => {
    const s = parserFor(kind)(evidence());
    expect(s).toMatchObject({ refusal: null, discovered: N, cases_complete: true, load_error_count: 0 });
    expect(s.passed + s.failed).toBe(N);
    if (failed !== null) expect(s.failed).toBe(failed);
    expect(s.cases).toHaveLength(N);
    expect(s.cases.filter((c) => c.outcome === "failed")).toHaveLength(s.failed);
    expect(s.cases.at(-1)?.id).toBe(lastId);
    expectInvariants(s, kind, 5);
  });

  it("more than MAX_CASES tests keep their counts, the list is cut and says it is incomplete", () => {
    const s = parserFor("go_test_json")(out(goJson(MAX_CASES + 5)));
    expect(s).toMatchObject({ refusal: null, discovered: MAX_CASES + 5, cases_complete: false });
    expect(s.cases).toHaveLength(MAX_CASES);
  });
});
