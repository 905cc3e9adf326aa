import { parseGoTestJson } from "../daemon/src/tools/parsers/go-test-json.js";
import { parseJunitXml } from "../daemon/src/tools/parsers/junit-xml.js";
import { parseNodeTest } from "../daemon/src/tools/parsers/node-test.js";
import { REPORT_PARSE_DEFAULTS } from "../daemon/src/tools/parsers/summary.js";

/**
 * `node --import tsx scripts/bench-parsers.ts [--tests N] [--runs R]`
 * The report parsers run synchronously in the daemon, once per test run. For a
 * synthetic report of N tests (every tenth failing with a 20-line trace) in
 * each format, prints its size and the median parse time. Never a timed test.
 */
function parseArgs(argv: string[]) {
  const o = { tests: 20_000, runs: 7 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--tests") o.tests = Number(argv[++i]);
    else if (a === "--runs") o.runs = Number(argv[++i]);
    else throw new Error(`unknown option ${a}; use --tests N, --runs R`);
  }
  for (const k of ["tests", "runs"] as const) if (!Number.isInteger(o[k]) || o[k] < 1) throw new Error(`--${k} must be a positive integer`);
  return o;
}

const TRACE = "E   assert 1 == 2\n".repeat(20);

function junit(n: number): Buffer {
  const cases: string[] = [];
  for (let i = 0; i < n; i++) {
    cases.push(
      i % 10 === 0
        ? `<testcase classname="pkg.mod" name="test_${i}" time="0.001"><failure message="assert 1 == 2">${TRACE}</failure></testcase>`
        : `<testcase classname="pkg.mod" name="test_${i}" time="0.001"/>`,
    );
  }
  const failures = Math.ceil(n / 10);
  return Buffer.from(
    `<?xml version="1.0"?><testsuites tests="${n}" failures="${failures}"><testsuite name="s" tests="${n}" failures="${failures}">${cases.join("\n")}</testsuite></testsuites>\n`,
  );
}

function goJson(n: number): string {
  const pkg = "example.com/m/p";
  const lines: string[] = [];
  const ev = (o: object) => lines.push(JSON.stringify({ Time: "2026-01-01T00:00:00Z", Package: pkg, ...o }));
  for (let i = 0; i < n; i++) {
    const test = `Test${i}`;
    ev({ Action: "run", Test: test });
    ev({ Action: "output", Test: test, Output: `=== RUN   ${test}\n` });
    if (i % 10 === 0) for (const l of TRACE.split("\n").slice(0, 20)) ev({ Action: "output", Test: test, Output: `    x_test.go:9: ${l}\n` });
    ev({ Action: i % 10 === 0 ? "fail" : "pass", Test: test, Elapsed: 0 });
  }
  ev({ Action: "fail", Elapsed: 1 });
  return `${lines.join("\n")}\n`;
}

function nodeTap(n: number): string {
  const lines = ["TAP version 13"];
  for (let i = 0; i < n; i++) {
    lines.push(
      `# Subtest: t${i}`,
      `${i % 10 === 0 ? "not ok" : "ok"} ${i + 1} - t${i}`,
      "  ---",
      "  duration_ms: 0.1",
      i % 10 === 0 ? "  error: 'boom'" : "  type: 'test'",
      "  ...",
    );
  }
  const failed = Math.ceil(n / 10);
  lines.push(
    `1..${n}`,
    `# tests ${n}`,
    "# suites 0",
    `# pass ${n - failed}`,
    `# fail ${failed}`,
    "# cancelled 0",
    "# skipped 0",
    "# todo 0",
    "# duration_ms 1.5",
  );
  return `${lines.join("\n")}\n`;
}

function median(f: () => { discovered: number }, runs: number): { ms: number; discovered: number } {
  const times: number[] = [];
  let discovered = 0;
  for (let k = 0; k < runs; k++) {
    const t = performance.now();
    discovered = f().discovered;
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return { ms: times[Math.floor(times.length / 2)] as number, discovered };
}

const o = parseArgs(process.argv.slice(2));
const xml = junit(o.tests);
const go = goJson(o.tests);
const tap = nodeTap(o.tests);
const cap = REPORT_PARSE_DEFAULTS.maxReportBytes;
const rows = [
  {
    format: "junit_xml",
    bytes: xml.length,
    ...median(() => parseJunitXml({ status: "read", bytes: xml }, { maxReportBytes: Math.max(cap, xml.length) }), o.runs),
  },
  { format: "go_test_json", bytes: Buffer.byteLength(go), ...median(() => parseGoTestJson(go), o.runs) },
  { format: "node_test", bytes: Buffer.byteLength(tap), ...median(() => parseNodeTest(tap), o.runs) },
];
for (const r of rows)
  console.log(
    `${r.format.padEnd(13)} ${o.tests} tests  ${(r.bytes / 1024).toFixed(0).padStart(6)} KiB  median ${r.ms.toFixed(1).padStart(7)} ms  (discovered ${r.discovered})`,
  );
