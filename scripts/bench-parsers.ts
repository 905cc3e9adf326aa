import { goJson, jestJson, nodeTap, pytestJunit } from "../daemon/src/tools/parsers/generated.testkit.js";
import { parseGoTestJson } from "../daemon/src/tools/parsers/go-test-json.js";
import { parseJestJson } from "../daemon/src/tools/parsers/jest-json.js";
import { parseJunitXml } from "../daemon/src/tools/parsers/junit-xml.js";
import { parseNodeTest } from "../daemon/src/tools/parsers/node-test.js";
import { REPORT_PARSE_DEFAULTS } from "../daemon/src/tools/parsers/summary.js";

/**
 * `node --import tsx scripts/bench-parsers.ts [--tests N] [--runs R]`
 * The report parsers run synchronously in the daemon, once per test run. For a
 * synthetic report of N tests (every tenth failing with a 20-line trace) in
 * each format (parsers/generated.testkit.ts, the same the unit tests read),
 * prints its size and the median parse time. Never a timed test.
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
const xml = pytestJunit(o.tests);
const jest = jestJson(o.tests);
const go = goJson(o.tests);
const tap = nodeTap(o.tests);
const cap = REPORT_PARSE_DEFAULTS.maxReportBytes;
const rows = [
  {
    format: "junit_xml",
    bytes: xml.length,
    ...median(() => parseJunitXml({ status: "read", bytes: xml }, { maxReportBytes: Math.max(cap, xml.length) }), o.runs),
  },
  {
    format: "jest_json",
    bytes: jest.length,
    ...median(() => parseJestJson({ status: "read", bytes: jest }, { maxReportBytes: Math.max(cap, jest.length) }), o.runs),
  },
  { format: "go_test_json", bytes: Buffer.byteLength(go), ...median(() => parseGoTestJson(go), o.runs) },
  { format: "node_test", bytes: Buffer.byteLength(tap), ...median(() => parseNodeTest(tap), o.runs) },
];
for (const r of rows)
  console.log(
    `${r.format.padEnd(13)} ${o.tests} tests  ${(r.bytes / 1024).toFixed(0).padStart(6)} KiB  median ${r.ms.toFixed(1).padStart(7)} ms  (discovered ${r.discovered})`,
  );
