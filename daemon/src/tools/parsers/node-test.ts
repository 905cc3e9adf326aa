/**
 * A strict parser for Node's node:test TAP output (`--test-reporter=tap`).
 * Counts come ONLY from the runner's final summary block; a missing, partial
 * or self-contradicting summary means 0 discovered, never a guess. Text a test
 * prints is escaped by the runner (`# \# pass 99`), so it cannot forge the block.
 * A test file that exits 0 without running a test (e.g. code it imports calls
 * process.exit(0)) is reported by the runner as ONE passing test named by the
 * file's path; it is not counted (see `files_without_tests`).
 * The Verifier reuses this parser.
 *
 * Why not tap-parser (the tap project's own parser, v18): it counts test points,
 * not node's summary block, so every rule above would still be code of ours on
 * top of it; it is lenient by design (a stream cut after its plan is `ok`),
 * counts skip and todo as passes and only top-level points (a suite with two
 * subtests is 1 test to it, 3 to node); and it adds five packages (tap-yaml,
 * yaml, ...) to the trusted daemon to read the one YAML key we show (`error:`).
 */
import { accepted, refused, type TestFailure, type TestOutputSummary, type TestReportSummary } from "./summary.js";

export type { TestFailure, TestOutputSummary } from "./summary.js";

export interface ParseOptions {
  maxFailures?: number;
  maxMessageChars?: number;
}

const SUMMARY_KEYS = ["tests", "suites", "pass", "fail", "cancelled", "skipped", "todo", "duration_ms"] as const;

/** a top-level passing entry named by an absolute path to a script: the runner's stand-in for a file that ran no test */
const FILE_ENTRY = /^ok \d+ - (\/.*\.[cm]?[jt]s)$/;

function unescapeName(raw: string): string {
  return raw.replace(/\\(.)/g, (_m, c: string) => (c === "n" ? "\n" : c));
}

/** Reads the `error:` value of a YAML diagnostics block that starts after line `i`. */
function errorMessageAfter(lines: string[], i: number, indent: number): string {
  const pad = " ".repeat(indent + 2);
  if (lines[i + 1] !== `${pad}---`) return "";
  for (let j = i + 2; j < lines.length; j++) {
    const line = lines[j] as string;
    if (line === `${pad}...`) break;
    if (!line.startsWith(`${pad}error: `)) continue;
    const value = line.slice(pad.length + 7);
    if (value === "|-" || value === "|" || value === ">-") {
      const body: string[] = [];
      for (let k = j + 1; k < lines.length; k++) {
        const l = lines[k] as string;
        if (l.startsWith(`${pad}  `)) body.push(l.slice(pad.length + 2));
        else if (l.trim() === "") body.push("");
        else break;
      }
      return body.join("\n").trim();
    }
    if (value.startsWith("'") && value.endsWith("'")) return value.slice(1, -1).replace(/''/g, "'");
    return value;
  }
  return "";
}

/** The registry's node_test parser: the summary every report format shares. Never throws. */
export function parseNodeTest(output: string, opts: ParseOptions = {}): TestReportSummary {
  const maxFailures = opts.maxFailures ?? 5;
  const maxChars = opts.maxMessageChars ?? 500;
  const lines = output.split(/\r?\n/);

  const failures: TestFailure[] = [];
  for (let i = 0; i < lines.length && failures.length < maxFailures; i++) {
    const m = /^( *)not ok \d+ - (.*?)(?: # (?:SKIP|TODO)\b.*)?$/.exec(lines[i] as string);
    if (!m) continue;
    const indent = (m[1] as string).length;
    failures.push({
      name: unescapeName(m[2] as string).slice(0, maxChars),
      message: errorMessageAfter(lines, i, indent).slice(0, maxChars),
    });
  }

  // the LAST "# tests N" at column 0 starts the runner's summary block
  let start = -1;
  for (let i = lines.length - 1; i >= 0; i--) {
    if (/^# tests \d+$/.test(lines[i] as string)) {
      start = i;
      break;
    }
  }
  if (start === -1) {
    if (output.trim() === "") return refused("node_test", "empty", "no node:test summary in the output", failures);
    return refused("node_test", "missing", "no node:test summary in the output", failures);
  }
  const values: Record<string, number> = {};
  for (let k = 0; k < SUMMARY_KEYS.length; k++) {
    const key = SUMMARY_KEYS[k] as string;
    const m = new RegExp(`^# ${key} (\\d+(?:\\.\\d+)?)$`).exec(lines[start + k] ?? "");
    if (!m) return refused("node_test", "truncated", `node:test summary is incomplete (no '# ${key}' line in order)`, failures);
    values[key] = Number(m[1]);
    // only the duration may be fractional; a count is a whole number a double holds exactly
    if (key !== "duration_ms" && !Number.isSafeInteger(values[key])) {
      return refused("node_test", "unparsable", `node:test summary has '# ${key} ${m[1]}', which is not a count`, failures);
    }
  }
  const v = (k: string): number => values[k] as number;
  if (v("pass") + v("fail") + v("cancelled") + v("skipped") + v("todo") !== v("tests")) {
    return refused("node_test", "inconsistent", "node:test summary counts do not add up", failures);
  }
  const filesWithoutTests = lines.slice(0, start).flatMap((l) => {
    const m = FILE_ENTRY.exec(l);
    return m ? [unescapeName(m[1] as string)] : [];
  });
  if (filesWithoutTests.length > v("pass")) return refused("node_test", "inconsistent", "node:test summary counts do not add up", failures);
  return accepted(
    "node_test",
    { passed: v("pass") - filesWithoutTests.length, failed: v("fail"), cancelled: v("cancelled"), skipped: v("skipped"), todo: v("todo") },
    { failures, files_without_tests: filesWithoutTests },
  );
}

/** The shape run_tests and the Verifier read today: the same parse, without the registry's added fields. */
export function parseNodeTestOutput(output: string, opts: ParseOptions = {}): TestOutputSummary {
  const s = parseNodeTest(output, opts);
  return {
    summary_found: s.summary_found,
    discovered: s.discovered,
    passed: s.passed,
    failed: s.failed,
    cancelled: s.cancelled,
    skipped: s.skipped,
    todo: s.todo,
    failures: s.failures,
    files_without_tests: s.files_without_tests,
    problem: s.problem,
  };
}
