import { describe, expect, it } from "vitest";
import { parseGoTestJson } from "./go-test-json.js";
import { goStderr, sampleNames, sampleText } from "./samples.testkit.js";

const PKG = "example.com/m/p";
const ev = (o: Record<string, unknown>) => JSON.stringify({ Time: "2026-01-01T00:00:00Z", Package: PKG, ...o });
const stream = (...lines: string[]) => `${lines.join("\n")}\n`;
const counts = (s: ReturnType<typeof parseGoTestJson>) => ({
  load_error_count: s.load_error_count,
  discovered: s.discovered,
  passed: s.passed,
  failed: s.failed,
  skipped: s.skipped,
  build_failed: s.build_failed,
  refusal: s.refusal,
});
const sample = (name: string) => parseGoTestJson(sampleText(name), goStderr(name), { maxFailures: 10 });

describe("parseGoTestJson on real go test -json output (Go 1.19)", () => {
  it.each([
    ["go-pass.stdout", { load_error_count: 0, discovered: 2, passed: 2, failed: 0, skipped: 0, build_failed: [], refusal: null }],
    ["go-skip.stdout", { load_error_count: 0, discovered: 2, passed: 1, failed: 0, skipped: 1, build_failed: [], refusal: null }],
    // TestTable + 3 subtests, TestParallel + a, b, a/inner, b/inner (skipped): every name is a test
    ["go-sub.stdout", { load_error_count: 0, discovered: 9, passed: 6, failed: 2, skipped: 1, build_failed: [], refusal: null }],
    ["go-panic.stdout", { load_error_count: 0, discovered: 2, passed: 1, failed: 1, skipped: 0, build_failed: [], refusal: null }],
    // TestMain runs the tests (all pass) then exits 1: the package failed outside its tests, a load error
    ["go-mainexit.stdout", { load_error_count: 1, discovered: 1, passed: 1, failed: 0, skipped: 0, build_failed: [], refusal: null }],
    // -timeout 2s: the test that started and never ended failed
    ["go-hang.stdout", { load_error_count: 0, discovered: 2, passed: 1, failed: 1, skipped: 0, build_failed: [], refusal: null }],
    ["go-notests.stdout", { load_error_count: 0, discovered: 0, passed: 0, failed: 0, skipped: 0, build_failed: [], refusal: null }],
    ["go-buildfail.stdout", { load_error_count: 1, discovered: 0, passed: 0, failed: 0, skipped: 0, build_failed: ["example.com/m/buildfail"], refusal: null }],
    ["go-setupfail.stdout", { load_error_count: 1, discovered: 0, passed: 0, failed: 0, skipped: 0, build_failed: ["example.com/m/setupfail"], refusal: null }],
    // go test -json ./... over all of the above, and one run with stderr merged into stdout
    [
      "go-all.stdout",
      {
        load_error_count: 2,
        discovered: 18,
        passed: 12,
        failed: 4,
        skipped: 2,
        build_failed: ["example.com/m/setupfail", "example.com/m/buildfail"],
        refusal: null,
      },
    ],
    ["go-merged.stdout", { load_error_count: 1, discovered: 2, passed: 2, failed: 0, skipped: 0, build_failed: ["example.com/m/buildfail"], refusal: null }],
  ])("%s", (name, expected) => {
    expect(counts(sample(name))).toEqual(expected);
  });

  it("regression: a package that fails to build is a load error with the compiler's error, never a failed test (Go < 1.24 prints it outside the JSON)", () => {
    const s = sample("go-buildfail.stdout");
    expect(s.failures).toEqual([]);
    expect(s.cases).toEqual([{ id: "example.com/m/buildfail", outcome: "error" }]);
    expect(s.load_errors).toEqual([{ unit: "example.com/m/buildfail", message: expect.stringContaining("bf.go:3:28: cannot use") }]);
    // the same with stderr merged into stdout: the compiler's lines sit between JSON events
    expect(sample("go-merged.stdout").load_errors[0]?.message).toContain("bf.go:3:28: cannot use");
  });

  it("names every test `import/path/TestName` (subtests `.../TestName/sub`) in stream order", () => {
    expect(sample("go-sub.stdout").cases.slice(0, 4)).toEqual([
      { id: "example.com/m/sub/TestTable", outcome: "failed" },
      { id: "example.com/m/sub/TestTable/one", outcome: "passed" },
      { id: "example.com/m/sub/TestTable/two", outcome: "failed" },
      { id: "example.com/m/sub/TestTable/with_space", outcome: "passed" },
    ]);
    const all = sample("go-all.stdout");
    expect(all.cases.filter((c) => c.outcome === "error").map((c) => c.id)).toEqual(
      expect.arrayContaining(["example.com/m/buildfail", "example.com/m/setupfail"]),
    );
    expect(all.cases.length).toBe(all.discovered + all.load_error_count);
  });

  it("a test that prints test2json's own `--- PASS` line after failing cannot turn its fail into a pass", () => {
    const s = sample("go-fail.stdout");
    // the stream holds a `pass` event for TestBreaks after its real `fail`
    expect(sampleText("go-fail.stdout").match(/"Action":"pass","Package":"example.com\/m\/fail","Test":"TestBreaks"/g)).toHaveLength(1);
    expect(counts(s)).toEqual({ load_error_count: 0, discovered: 3, passed: 2, failed: 1, skipped: 0, build_failed: [], refusal: null });
    expect(s.failures[0]).toMatchObject({ name: "TestBreaks (example.com/m/fail)", message: expect.stringContaining("one is not two") });
  });

  it("names failures in stream order: a failing subtest, then its parent", () => {
    expect(sample("go-sub.stdout").failures.map((f) => f.name)).toEqual(["TestTable/two (example.com/m/sub)", "TestTable (example.com/m/sub)"]);
  });

  it("every cut of a one-package stream is refused or reads exactly like the whole stream", () => {
    for (const name of sampleNames(".stdout").filter((n) => n !== "go-all.stdout" && n !== "go-merged.stdout")) {
      const text = sampleText(name);
      const whole = counts(parseGoTestJson(text));
      for (let end = 0; end < text.length; end += 11) {
        const s = parseGoTestJson(text.slice(0, end));
        if (s.refusal === null) expect({ name, end, c: counts(s) }).toEqual({ name, end, c: whole });
        else expect(["empty", "truncated", "unparsable"]).toContain(s.refusal);
      }
    }
  });
});

describe("parseGoTestJson counting rules", () => {
  it("-count=2 runs a test twice: one test, failed if either run failed", () => {
    const s = parseGoTestJson(
      stream(
        ev({ Action: "run", Test: "TestA" }),
        ev({ Action: "pass", Test: "TestA" }),
        ev({ Action: "run", Test: "TestB" }),
        ev({ Action: "pass", Test: "TestB" }),
        ev({ Action: "run", Test: "TestA" }),
        ev({ Action: "fail", Test: "TestA" }),
        ev({ Action: "run", Test: "TestB" }),
        ev({ Action: "pass", Test: "TestB" }),
        ev({ Action: "fail" }),
      ),
    );
    expect(counts(s)).toEqual({ load_error_count: 0, discovered: 2, passed: 1, failed: 1, skipped: 0, build_failed: [], refusal: null });
  });

  it("Go 1.24+ build events (build-output, build-fail, FailedBuild) make the package a load error, not a test", () => {
    // the documented shape (cmd/test2json); Go 1.24 is not installed here to generate it
    const s = parseGoTestJson(
      stream(
        JSON.stringify({ ImportPath: `${PKG} [${PKG}.test]`, Action: "build-output", Output: `# ${PKG} [${PKG}.test]\n` }),
        JSON.stringify({ ImportPath: `${PKG} [${PKG}.test]`, Action: "build-output", Output: "./x.go:3:1: syntax error\n" }),
        JSON.stringify({ ImportPath: `${PKG} [${PKG}.test]`, Action: "build-fail" }),
        ev({ Action: "start" }),
        ev({ Action: "output", Output: `FAIL\t${PKG} [build failed]\n` }),
        ev({ Action: "fail", Elapsed: 0, FailedBuild: `${PKG} [${PKG}.test]` }),
      ),
    );
    expect(counts(s)).toEqual({ load_error_count: 1, discovered: 0, passed: 0, failed: 0, skipped: 0, build_failed: [PKG], refusal: null });
    expect(s.load_errors[0]?.message).toContain("syntax error");
  });

  it("a plain `FAIL\tpkg` line from the go command fails its package even without a build marker", () => {
    const s = parseGoTestJson(
      stream(ev({ Action: "run", Test: "TestA" }), ev({ Action: "pass", Test: "TestA" }), ev({ Action: "pass" }), "FAIL\texample.com/m/q\t0.001s"),
    );
    expect(counts(s)).toEqual({ load_error_count: 1, discovered: 1, passed: 1, failed: 0, skipped: 0, build_failed: [], refusal: null });
    expect(s.load_errors[0]?.unit).toBe("example.com/m/q");
  });

  it("an action this parser does not know is ignored, and cannot end a test: a test left without an end failed", () => {
    const s = parseGoTestJson(
      stream(
        ev({ Action: "run", Test: "TestA" }),
        ev({ Action: "attr", Test: "TestA", Key: "k", Value: "v" }),
        ev({ Action: "pass", Test: "TestA" }),
        ev({ Action: "run", Test: "TestB" }),
        ev({ Action: "finished-somehow", Test: "TestB" }),
        ev({ Action: "pass" }),
      ),
    );
    expect(counts(s)).toEqual({ load_error_count: 0, discovered: 2, passed: 1, failed: 1, skipped: 0, build_failed: [], refusal: null });
  });

  it("CRLF line ends and blank lines are read like plain newlines", () => {
    const s = parseGoTestJson(`${ev({ Action: "run", Test: "TestA" })}\r\n\r\n${ev({ Action: "pass", Test: "TestA" })}\r\n${ev({ Action: "pass" })}\r\n`);
    expect(counts(s)).toEqual({ load_error_count: 0, discovered: 1, passed: 1, failed: 0, skipped: 0, build_failed: [], refusal: null });
  });

  it("caps the failures listed and each message, and keeps counting past the cap", () => {
    const lines: string[] = [];
    for (let i = 0; i < 20; i++)
      lines.push(
        ev({ Action: "run", Test: `T${i}` }),
        ev({ Action: "output", Test: `T${i}`, Output: `${"x".repeat(900)}\n` }),
        ev({ Action: "fail", Test: `T${i}` }),
      );
    const s = parseGoTestJson(stream(...lines, ev({ Action: "fail" })), "", { maxFailures: 3, maxMessageChars: 50 });
    expect(s).toMatchObject({ load_error_count: 0, discovered: 20, failed: 20 });
    expect(s.failures.map((f) => f.name)).toEqual([`T0 (${PKG})`, `T1 (${PKG})`, `T2 (${PKG})`]);
    expect(s.failures[0]?.message).toHaveLength(50);
  });
});

describe("parseGoTestJson refuses what it cannot trust", () => {
  const zero = { load_error_count: 0, discovered: 0, passed: 0, failed: 0, skipped: 0, build_failed: [] };

  it("no output -> empty", () => {
    expect(counts(parseGoTestJson(""))).toEqual({ ...zero, refusal: "empty" });
    expect(counts(parseGoTestJson("\n \n"))).toEqual({ ...zero, refusal: "empty" });
  });

  it("plain `go test` output (no -json) -> unparsable, even when it says ok", () => {
    expect(counts(parseGoTestJson("ok  \texample.com/m/p\t0.002s\n"))).toEqual({ ...zero, refusal: "unparsable" });
  });

  it("a line that starts like an event but is not JSON, or not an event -> unparsable", () => {
    const good = ev({ Action: "pass" });
    expect(parseGoTestJson(stream('{"Action":"run", oops', good))).toMatchObject({ refusal: "unparsable", discovered: 0 });
    expect(parseGoTestJson(stream(JSON.stringify({ Action: 5, Package: PKG }), good))).toMatchObject({ refusal: "unparsable", discovered: 0 });
    expect(parseGoTestJson(stream(JSON.stringify({ Package: PKG }), good))).toMatchObject({ refusal: "unparsable", discovered: 0 });
  });

  it("output cut mid-line -> truncated", () => {
    const full = stream(ev({ Action: "run", Test: "TestA" }), ev({ Action: "pass", Test: "TestA" }), ev({ Action: "pass" }));
    expect(parseGoTestJson(full.slice(0, -10))).toMatchObject({ refusal: "truncated", discovered: 0 });
    // even a complete last event without its newline: the writer always ends lines
    expect(parseGoTestJson(full.slice(0, -1))).toMatchObject({ refusal: "truncated", discovered: 0 });
  });

  it("a package that never reached pass, fail or skip -> truncated (its events may be missing)", () => {
    const s = parseGoTestJson(stream(ev({ Action: "run", Test: "TestA" }), ev({ Action: "pass", Test: "TestA" })));
    expect(s).toMatchObject({ refusal: "truncated", discovered: 0, problem: expect.stringContaining(PKG) });
  });
});
