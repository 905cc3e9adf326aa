import { describe, expect, it } from "vitest";
import { parseJunitXml } from "./junit-xml.js";
import type { ReportFile } from "./report-file.js";
import { sampleBytes, sampleNames } from "./samples.testkit.js";

const read = (xml: string | Uint8Array): ReportFile => ({ status: "read", bytes: typeof xml === "string" ? Buffer.from(xml, "utf8") : xml });
const parse = (xml: string | Uint8Array, opts = {}) => parseJunitXml(read(xml), opts);
const counts = (s: ReturnType<typeof parse>) => ({
  discovered: s.discovered,
  passed: s.passed,
  failed: s.failed,
  errors: s.errors,
  skipped: s.skipped,
  refusal: s.refusal,
});

/** a report of one suite: `cases` are inner XML of <testsuite>, attributes as given */
const suite = (attrs: string, cases: string) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n<testsuite name="s" ${attrs}>${cases}</testsuite>\n</testsuites>\n`;
const PASS = '<testcase classname="c" name="ok"/>';
const FAIL = '<testcase classname="c" name="bad"><failure message="boom">trace</failure></testcase>';

describe("parseJunitXml on real reports", () => {
  it.each([
    // pytest 9.0.3: pass, assertion failure, skip, xfail (a skip), setup error, a failing test whose
    // teardown also errors (pytest writes TWO test cases of the same name), parametrize
    ["junit-pytest-mixed.xml", { discovered: 11, passed: 2, failed: 7, errors: 3, skipped: 2, refusal: null }],
    ["junit-pytest-passed.xml", { discovered: 3, passed: 3, failed: 0, errors: 0, skipped: 0, refusal: null }],
    // a collection error is one <error> test case named by the module: a failure, never 0 tests
    // a collection error is a load error, not a test (pytest 9 and pytest 7.2 with junit_family=xunit1)
    ["junit-pytest-collection-error.xml", { discovered: 0, passed: 0, failed: 0, errors: 0, skipped: 0, refusal: null }],
    ["junit-pytest7-collection-error.xml", { discovered: 0, passed: 0, failed: 0, errors: 0, skipped: 0, refusal: null }],
    // pytest 7.2 counts a passing test whose teardown errors twice in tests= but writes one case
    ["junit-pytest7-mixed.xml", { discovered: 10, passed: 6, failed: 2, errors: 1, skipped: 2, refusal: null }],
    ["junit-pytest-no-tests.xml", { discovered: 0, passed: 0, failed: 0, errors: 0, skipped: 0, refusal: null }],
    // vitest 4.1.12: describe blocks become "a > b" names, skip and todo become <skipped/>
    ["junit-vitest-mixed.xml", { discovered: 10, passed: 4, failed: 4, errors: 0, skipped: 2, refusal: null }],
    ["junit-vitest-passed.xml", { discovered: 2, passed: 2, failed: 0, errors: 0, skipped: 0, refusal: null }],
    // a test file that fails to import is a load error named by the file, not a test
    ["junit-vitest-collection-error.xml", { discovered: 1, passed: 1, failed: 0, errors: 0, skipped: 0, refusal: null }],
    // jest 29.7 + jest-junit 16
    ["junit-jest-mixed.xml", { discovered: 5, passed: 2, failed: 2, errors: 0, skipped: 1, refusal: null }],
    // regression: refused as inconsistent (failures="0" beside two <failure>s), so a mocha baseline had no list
    ["junit-mocha-mixed.xml", { discovered: 7, passed: 3, failed: 2, errors: 0, skipped: 2, refusal: null }],
  ])("%s", (name, expected) => {
    expect(counts(parseJunitXml(read(sampleBytes(name))))).toEqual(expected);
  });

  it("regression: a pytest collection error is a load error naming the module with pytest's own lines, never a failed test", () => {
    const s = parseJunitXml(read(sampleBytes("junit-pytest7-collection-error.xml")));
    expect(s).toMatchObject({ discovered: 0, failed: 0, load_error_count: 1, cases: [{ id: "tests/test_broken_import.py", outcome: "error" }] });
    expect(s.load_errors).toEqual([{ unit: "tests/test_broken_import.py", message: expect.stringContaining("ImportError while importing test module") }]);
    expect(s.load_errors[0]?.message).toContain("/workspace/tests/test_broken_import.py".replace("/workspace", "/w"));
    // without file= (pytest 9's default xunit2) the module name is the unit
    expect(parseJunitXml(read(sampleBytes("junit-pytest-collection-error.xml"))).load_errors[0]?.unit).toBe("tests.test_broken_import");
  });

  it("regression: a vitest file that fails to import is a load error named by the file, not a failed test", () => {
    const s = parseJunitXml(read(sampleBytes("junit-vitest-collection-error.xml")));
    expect(s.cases).toEqual([
      { id: "tests/broken.test.js", outcome: "error" },
      { id: "tests/ok.test.js > fine", outcome: "passed" },
      { id: "tests/throws.test.js", outcome: "error" },
    ]);
    expect(s.load_errors.map((e) => e.unit)).toEqual(["tests/broken.test.js", "tests/throws.test.js"]);
    expect(s.load_errors[0]?.message).toMatch(/^Error: Cannot find module/);
  });

  it("pytest ids are node ids built from file= (xunit1): classes and parameters included, what SWE-bench names", () => {
    const s = parseJunitXml(read(sampleBytes("junit-pytest7-mixed.xml")));
    expect(s.cases.map((c) => `${c.id} ${c.outcome}`)).toEqual([
      "tests/test_mixed.py::test_adds passed",
      "tests/test_mixed.py::test_breaks failed",
      "tests/test_mixed.py::test_later skipped",
      "tests/test_mixed.py::test_known_bug skipped",
      "tests/test_mixed.py::test_passes_then_teardown_errors failed",
      "tests/test_mixed.py::test_param[1] passed",
      "tests/test_mixed.py::test_param[2] passed",
      "tests/test_mixed.py::TestGroup::test_in_class passed",
      "tests/test_mixed.py::TestGroup::TestInner::test_nested passed",
      "tests/sub/test_deep.py::test_deep passed",
    ]);
  });

  it("a test written as two cases (pytest: a failing test whose teardown errors) is one id with the worst outcome; the counts keep both", () => {
    const s = parseJunitXml(read(sampleBytes("junit-pytest-mixed.xml")));
    const ids = s.cases.map((c) => c.id);
    expect(ids.filter((id) => id === "tests.test_mixed::test_fails_then_teardown_errors")).toHaveLength(1);
    expect(s.cases.length).toBe(s.discovered - 1);
    // vitest: `file > describe > test`
    expect(parseJunitXml(read(sampleBytes("junit-vitest-mixed.xml"))).cases.map((c) => c.id)).toContain("tests/mixed.test.js > maths > nested > deep pass");
  });

  it("names failures in report order with decoded messages (pytest)", () => {
    const s = parseJunitXml(read(sampleBytes("junit-pytest-mixed.xml")), { maxFailures: 10 });
    expect(s.failures.map((f) => f.name)).toEqual([
      "tests.test_mixed: test_breaks",
      "tests.test_mixed: test_uses_broken",
      "tests.test_mixed: test_fails_then_teardown_errors",
      "tests.test_mixed: test_fails_then_teardown_errors",
      "tests.test_mixed: test_passes_then_teardown_errors",
      "tests.test_mixed: test_param[2]",
      "tests.test_mixed: test_prints",
    ]);
    expect(s.failures[0]?.message).toBe("AssertionError: one is not two\nassert 1 == 2");
    expect(s.failures[1]?.message).toBe('failed on setup with "RuntimeError: fixture exploded"');
  });

  it("a failure without a message attribute shows its text (jest-junit)", () => {
    const s = parseJunitXml(read(sampleBytes("junit-jest-mixed.xml")));
    expect(s.failures[0]).toMatchObject({ name: "maths breaks", message: expect.stringContaining("Expected: 2") });
  });

  it("vitest exits 1 for an unhandled error yet writes an all-pass report: the report alone is no verdict (the exit code must count too)", () => {
    expect(counts(parseJunitXml(read(sampleBytes("junit-vitest-unhandled.xml"))))).toEqual({
      discovered: 2,
      passed: 2,
      failed: 0,
      errors: 0,
      skipped: 0,
      refusal: null,
    });
  });

  it("regression: jest-junit lists it.todo as a plain (passing-looking) test case but leaves it out of tests=: refused, not counted as a pass", () => {
    const s = parseJunitXml(read(sampleBytes("junit-jest-todo.xml")));
    expect(counts(s)).toEqual({ discovered: 0, passed: 0, failed: 0, errors: 0, skipped: 0, refusal: "inconsistent" });
    expect(s.problem).toContain('tests="1"');
  });

  it("jest-junit's suite errors (a test file that failed to load) disagree with its own totals: refused", () => {
    expect(parseJunitXml(read(sampleBytes("junit-jest-suite-error.xml")))).toMatchObject({ refusal: "inconsistent", discovered: 0 });
  });

  it("every cut of every real report is refused or reads exactly like the whole report (never a partial count)", () => {
    for (const name of sampleNames(".xml")) {
      const bytes = sampleBytes(name);
      const whole = counts(parseJunitXml(read(bytes)));
      for (let end = 0; end < bytes.length; end += 7) {
        const s = parseJunitXml(read(bytes.subarray(0, end)));
        if (s.refusal === null) expect({ name, end, c: counts(s) }).toEqual({ name, end, c: whole });
        else expect(["empty", "truncated", "unparsable"]).toContain(s.refusal);
      }
    }
  });
});

describe("parseJunitXml refuses what it cannot trust", () => {
  it("no report file -> missing; over the cap -> too_large; unreadable -> unreadable", () => {
    expect(parseJunitXml({ status: "missing" })).toMatchObject({ refusal: "missing", discovered: 0, summary_found: false });
    expect(parseJunitXml({ status: "too_large", size: 9_000_000 })).toMatchObject({ refusal: "too_large", problem: expect.stringContaining("9000000") });
    expect(parseJunitXml({ status: "unreadable", reason: "not a regular file" })).toMatchObject({
      refusal: "unreadable",
      problem: expect.stringContaining("not a regular file"),
    });
  });

  it("bytes over the cap are refused before parsing, whatever they hold", () => {
    const xml = suite('tests="1"', PASS);
    expect(parse(xml, { maxReportBytes: xml.length - 1 })).toMatchObject({ refusal: "too_large", discovered: 0 });
    expect(parse(xml, { maxReportBytes: xml.length })).toMatchObject({ refusal: null, discovered: 1 });
  });

  it("an empty or blank report -> empty", () => {
    expect(parse("")).toMatchObject({ refusal: "empty" });
    expect(parse(" \n\t\n")).toMatchObject({ refusal: "empty" });
  });

  it("a report cut before its root closes -> truncated", () => {
    const xml = suite('tests="2" failures="1"', PASS + FAIL);
    expect(parse(xml.slice(0, xml.indexOf("</testsuite>")))).toMatchObject({ refusal: "truncated", discovered: 0 });
    expect(parse(xml.slice(0, xml.indexOf('name="bad"') + 5))).toMatchObject({ refusal: "truncated" });
  });

  it.each([
    ["not XML at all", "all tests passed\n"],
    ["not UTF-8", Buffer.from([0x3c, 0x61, 0x3e, 0xff, 0xfe, 0x3c, 0x2f, 0x61, 0x3e])],
    ["another root element", "<results><testcase name='x'/></results>"],
    ["two root elements (two reports glued together)", suite("", PASS) + suite("", PASS)],
    ["text after the root element", `${suite("", PASS)}trailing words`],
    ["mismatched tags", "<testsuites><testsuite></testcase></testsuites>"],
    ["a repeated attribute", '<testsuites><testsuite tests="1" tests="0">' + PASS + "</testsuite></testsuites>"],
    ["a <testcase> outside any <testsuite>", `<testsuites>${PASS}</testsuites>`],
    ["a <testcase> inside a <testcase>", suite("", `<testcase name="outer">${FAIL}</testcase>`)],
    ["a <testcase> hidden in an unknown element", suite("", `<group>${FAIL}</group>`)],
    ["a nested <testsuites>", `<testsuites><testsuites>${suite("", PASS)}</testsuites></testsuites>`],
    ["an element name that would pollute a prototype", `<testsuites><testsuite><__proto__/>${PASS}</testsuite></testsuites>`],
    ["nesting deeper than any report needs", suite("", `${"<x>".repeat(100)}${"</x>".repeat(100)}`)],
  ])("%s -> unparsable", (_label, xml) => {
    expect(counts(parse(xml))).toEqual({ discovered: 0, passed: 0, failed: 0, errors: 0, skipped: 0, refusal: "unparsable" });
  });

  it("a report made to cost seconds of parsing (500,000 empty elements, 200,000+ attributes, 600,000 open tags) is refused before the parser runs", () => {
    const siblings = parse(suite("", "<x/>".repeat(500_000)));
    expect(siblings).toMatchObject({ refusal: "unparsable", problem: expect.stringContaining("500002 elements") });
    const attrs = parse(suite("", `<testcase ${Array.from({ length: 200_001 }, (_, i) => `a${i}=""`).join(" ")}/>`));
    expect(attrs).toMatchObject({ refusal: "unparsable", problem: expect.stringContaining("attributes") });
    const deep = parse("<a>".repeat(600_000));
    expect(deep).toMatchObject({ refusal: "unparsable", problem: expect.stringContaining("600000 deep") });
  });

  it("an attribute value over 256 KiB is refused before the validator reads it (about 1 s per MiB)", () => {
    expect(parse(suite("", `<testcase name="${"x".repeat(262_145)}"/>`))).toMatchObject({
      refusal: "unparsable",
      problem: expect.stringContaining("attribute value"),
    });
    expect(parse(suite("", `<testcase name="${"x".repeat(262_144)}"/>`))).toMatchObject({ refusal: null, discovered: 1 });
  });

  it("a malformed report's problem stays short (the validator can quote every open tag)", () => {
    const s = parse(`<testsuites>${"<testsuite>".repeat(30)}`);
    expect(s.refusal).toBe("truncated");
    expect(s.problem?.length).toBeLessThan(300);
  });

  it("DOCTYPE and ENTITY declarations are refused, never expanded (billion laughs, external entity, a DOCTYPE after the root)", () => {
    const laughs =
      '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">' +
      '<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>' +
      '<testsuites><testsuite tests="1"><testcase name="&lol3;"/></testsuite></testsuites>';
    const xxe = '<!DOCTYPE t [<!ENTITY x SYSTEM "file:///etc/passwd">]><testsuites><testsuite><testcase name="&x;"/></testsuite></testsuites>';
    const late = `<testsuites><testsuite>${PASS}</testsuite><!DOCTYPE x [<!ENTITY y "z">]></testsuites>`;
    const bare = `<testsuites><testsuite><!ENTITY y "z">${PASS}</testsuite></testsuites>`;
    for (const xml of [laughs, xxe, late, bare]) {
      const s = parse(xml);
      expect(s).toMatchObject({ refusal: "unparsable", discovered: 0 });
      expect(s.problem).toContain("declaration");
    }
  });

  it("the same text inside a comment, a CDATA section or an escaped message is only text", () => {
    const xml = suite(
      'tests="1" failures="1"',
      '<!-- <!DOCTYPE x> --><testcase name="t"><failure message="&lt;!DOCTYPE html&gt;"><![CDATA[<!DOCTYPE html><!ENTITY a "b">]]></failure></testcase>',
    );
    const s = parse(xml);
    expect(counts(s)).toEqual({ discovered: 1, passed: 0, failed: 1, errors: 0, skipped: 0, refusal: null });
    expect(s.failures[0]?.message).toBe("<!DOCTYPE html>");
  });

  it('<testsuites tests="100"> wrapped around 2 test cases: the wrapper lies -> inconsistent', () => {
    const xml = `<testsuites tests="100" failures="0"><testsuite tests="2">${PASS}${PASS}</testsuite></testsuites>`;
    const s = parse(xml);
    expect(counts(s)).toEqual({ discovered: 0, passed: 0, failed: 0, errors: 0, skipped: 0, refusal: "inconsistent" });
    expect(s.problem).toContain('tests="100"');
  });

  it.each([
    ["failures", 'tests="2" failures="0"'],
    ["errors", 'tests="2" errors="1"'],
    ["skipped", 'tests="2" skipped="1"'],
    ["tests", 'tests="3"'],
  ])("a suite whose %s attribute disagrees with its test cases -> inconsistent (failed test cases stay as diagnostics)", (_k, attrs) => {
    const s = parse(suite(attrs, PASS + FAIL));
    expect(s).toMatchObject({ refusal: "inconsistent", discovered: 0, failed: 0 });
    expect(s.failures.map((f) => f.name)).toEqual(["c: bad"]);
  });

  it("a suite that claims failures and errors is held to their sum (mocha counts every <failure> in errors); a wrong sum is still inconsistent", () => {
    expect(parse(suite('tests="2" failures="0" errors="1"', PASS + FAIL))).toMatchObject({ refusal: null, discovered: 2, failed: 1 });
    expect(parse(suite('tests="2" failures="1" errors="1"', PASS + FAIL))).toMatchObject({
      refusal: "inconsistent",
      problem: expect.stringContaining('failures="1" errors="1"'),
    });
  });

  it.each(["-1", "NaN", "1e3", " 2", "2.0", "0x2", "", "99999999999"])('a count attribute tests="%s" -> unparsable', (value) => {
    expect(parse(suite(`tests="${value}"`, PASS + PASS))).toMatchObject({ refusal: "unparsable", discovered: 0 });
  });
});

describe("parseJunitXml counts test cases", () => {
  it("a failure or an error makes a test case failed, whatever else it holds; <error> is also counted in errors", () => {
    const cases =
      '<testcase name="f"><failure/></testcase><testcase name="e"><error message="crash"/></testcase>' +
      '<testcase name="fe"><failure/><error/></testcase><testcase name="sf"><skipped/><failure/></testcase>' +
      '<testcase name="s"><skipped message="later"/></testcase><testcase name="p"><system-out>hello</system-out></testcase>';
    expect(counts(parse(suite('tests="6" failures="3" errors="2" skipped="1"', cases)))).toEqual({
      discovered: 6,
      passed: 1,
      failed: 4,
      errors: 2,
      skipped: 1,
      refusal: null,
    });
  });

  it("duplicate test names are separate test cases: a failing duplicate is never hidden by a passing one", () => {
    const dup = '<testcase classname="c" name="same"/><testcase classname="c" name="same"><failure message="second"/></testcase>';
    expect(parse(suite('tests="2" failures="1"', dup))).toMatchObject({
      discovered: 2,
      passed: 1,
      failed: 1,
      failures: [{ name: "c: same", message: "second" }],
    });
  });

  it("nested suites: a parent's totals must cover its child suites' test cases", () => {
    const nested = `<testsuites tests="3" failures="1"><testsuite name="outer" tests="3" failures="1">${PASS}<testsuite name="inner" tests="2" failures="1">${PASS}${FAIL}</testsuite></testsuite></testsuites>`;
    expect(counts(parse(nested))).toEqual({ discovered: 3, passed: 2, failed: 1, errors: 0, skipped: 0, refusal: null });
    const notAggregated = `<testsuites><testsuite name="outer" tests="1">${PASS}<testsuite name="inner" tests="2">${PASS}${PASS}</testsuite></testsuite></testsuites>`;
    expect(parse(notAggregated)).toMatchObject({ refusal: "inconsistent", problem: expect.stringContaining('name="outer"') });
  });

  it("a bare <testsuite> root (older pytest) and absent count attributes are accepted", () => {
    expect(counts(parse(`<testsuite name="pytest">${PASS}${FAIL}</testsuite>`))).toEqual({
      discovered: 2,
      passed: 1,
      failed: 1,
      errors: 0,
      skipped: 0,
      refusal: null,
    });
  });

  it("an empty <testsuites/> is a report of 0 tests, not a refusal (the verdict rule decides what 0 means)", () => {
    expect(parse("<testsuites/>")).toMatchObject({ refusal: null, summary_found: true, discovered: 0 });
  });

  it("entities are never expanded: an undefined entity stays text and changes no count", () => {
    const s = parse(suite('tests="1" failures="1"', '<testcase name="a &amp; b &#x41; &xxe;"><failure message="x &lt; y"/></testcase>'));
    expect(s).toMatchObject({ discovered: 1, failed: 1, failures: [{ name: "a & b A &xxe;", message: "x < y" }] });
  });

  it("a failure body is shown with CDATA verbatim and entities decoded; markup inside it is text, not tests", () => {
    const body =
      '<testcase name="t"><failure>a &lt; b <![CDATA[<raw> & ]]> <testcase name="fake"/></failure><system-out><testcase name="fake2"/></system-out></testcase>';
    const s = parse(suite('tests="1" failures="1"', body));
    expect(s).toMatchObject({ discovered: 1, failed: 1 });
    expect(s.failures[0]?.message).toBe('a < b <raw> &  <testcase name="fake"/>');
  });

  it("megabytes of captured output (system-out, a failure body) are read as one text, not parsed", () => {
    const out = `<testcase name="t"><system-out>${"trace line here\n".repeat(60_000)}</system-out><failure>${"x".repeat(900_000)}</failure></testcase>`;
    expect(parse(suite('tests="1" failures="1"', out))).toMatchObject({ refusal: null, discovered: 1, failed: 1 });
  });

  it("caps the failures listed and each message, and keeps counting past the cap", () => {
    const many = Array.from({ length: 30 }, (_, i) => `<testcase name="t${i}"><failure message="${"m".repeat(900)}"/></testcase>`).join("");
    const s = parse(suite('tests="30" failures="30"', many), { maxFailures: 3, maxMessageChars: 50 });
    expect(s).toMatchObject({ discovered: 30, failed: 30 });
    expect(s.failures).toHaveLength(3);
    expect(s.failures[0]?.message).toHaveLength(50);
  });

  it("a report of 20,000 test cases near the size cap is read whole", () => {
    const big = Array.from({ length: 20_000 }, (_, i) => `<testcase classname="pkg.mod" name="test_${i}" time="0.001"/>`).join("\n");
    expect(parse(suite('tests="20000"', big))).toMatchObject({ refusal: null, discovered: 20_000, passed: 20_000 });
  });
});

describe("ids that stay the same from run to run", () => {
  it("a mocha xunit report names the same tests when only its times and timestamp differ (what changes between two runs of one suite)", () => {
    const xml = sampleBytes("junit-mocha-mixed.xml").toString("utf8");
    const later = xml.replace(/time="[0-9.]+"/g, 'time="9.999"').replace(/timestamp="[^"]*"/g, 'timestamp="Fri, 04 Dec 2026 01:02:03 GMT"');
    expect(later).not.toBe(xml);
    const ids = (x: string) => (parse(x).cases ?? []).map((c) => c.id);
    expect(ids(xml).length).toBeGreaterThan(0);
    expect(ids(later)).toEqual(ids(xml));
  });
});
