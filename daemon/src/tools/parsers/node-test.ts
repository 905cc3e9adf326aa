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
import { CaseList } from "./cases.js";
import { accepted, refused, type TestFailure, type TestOutputSummary, type TestReportSummary } from "./summary.js";

export type { TestFailure, TestOutputSummary } from "./summary.js";

export interface ParseOptions {
  maxFailures?: number;
  maxMessageChars?: number;
}

const SUMMARY_KEYS = ["tests", "suites", "pass", "fail", "cancelled", "skipped", "todo", "duration_ms"] as const;

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

/** The YAML block's keys after a test point at `indent`, as raw strings (only the few we read). */
function yamlKeys(lines: string[], i: number, indent: number): Record<string, string> {
  const pad = " ".repeat(indent + 2);
  const keys: Record<string, string> = {};
  if (lines[i + 1] !== `${pad}---`) return keys;
  for (let j = i + 2; j < lines.length; j++) {
    const line = lines[j] as string;
    if (line === `${pad}...`) break;
    const m = /^(type|failureType): '([^']*)'$/.exec(line.slice(pad.length));
    if (line.startsWith(pad) && m) keys[m[1] as string] = m[2] as string;
  }
  return keys;
}

/** the `# ` comment lines node printed just before `# Subtest:` at line `at`: a file's own stderr when it failed to load */
function commentsBefore(lines: string[], at: number): string {
  let k = at;
  while (k > 0 && /^# /.test(lines[k - 1] as string) && !(lines[k - 1] as string).startsWith("# Subtest: ")) k--;
  return lines
    .slice(k, at)
    .map((l) => unescapeName(l.slice(2)))
    .join("\n");
}

const TEST_POINT = /^( *)(not ok|ok) \d+ - (.*?)( # (?:SKIP|TODO)\b.*)?$/;

/**
 * The tests the stream names, before its summary block. An id is `parent > test`:
 * Node 20's TAP names no file for a test (only a failing one's location, which
 * would change the id as the test goes red to green), so two files holding a
 * test of the same name share one id (the worst outcome). A `describe` suite is
 * not a test (node counts it in `suites`) unless it failed for a reason of its
 * own. A top-level entry named by a script's absolute path is the file itself:
 * passing, it ran no test (`files_without_tests`); failing, it failed before or
 * outside its tests (a load error, with node's echo of its stderr).
 */
function collectCases(lines: string[], end: number): { list: CaseList; filesWithoutTests: string[]; points: number } {
  const list = new CaseList();
  let points = 0;
  const filesWithoutTests: string[] = [];
  const parents: string[] = [];
  for (let i = 0; i < end; i++) {
    const line = lines[i] as string;
    const sub = /^( *)# Subtest: (.*)$/.exec(line);
    if (sub) {
      const depth = Math.floor((sub[1] as string).length / 4);
      parents.length = Math.min(parents.length, depth);
      parents[depth] = unescapeName(sub[2] as string);
      continue;
    }
    const m = TEST_POINT.exec(line);
    if (!m) continue;
    const indent = (m[1] as string).length;
    const depth = Math.floor(indent / 4);
    const name = unescapeName(m[3] as string);
    const failed = m[2] === "not ok";
    const directive = m[4] ?? "";
    if (depth === 0 && /^\/.*\.[cm]?[jt]s$/.test(name)) {
      if (!failed) filesWithoutTests.push(name);
      else {
        const header = lines.lastIndexOf(`# Subtest: ${m[3]}`, i);
        list.loadError(name, commentsBefore(lines, header === -1 ? i : header) || errorMessageAfter(lines, i, indent) || "the test file failed");
      }
      continue;
    }
    const yaml = yamlKeys(lines, i, indent);
    if (yaml.type === "suite" && (!failed || yaml.failureType === "subtestsFailed")) continue;
    const id = [...parents.slice(0, depth), name].join(" > ");
    list.add(id, failed ? "failed" : directive !== "" ? "skipped" : "passed");
    points++;
  }
  return { list, filesWithoutTests, points };
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
  const { list, filesWithoutTests, points } = collectCases(lines, start);
  const loadErrors = list.loadErrorTotal;
  // node counts a file entry as one test: a passing one in pass, a failing one in fail
  if (filesWithoutTests.length > v("pass") || loadErrors > v("fail"))
    return refused("node_test", "inconsistent", "node:test summary counts do not add up", failures);
  // the test points and the summary are two accounts of the same run: more points than
  // tests is a forged or doubled stream; fewer (a stream of the summary alone) names too few to compare
  const expected = v("tests") - filesWithoutTests.length - loadErrors;
  if (points > expected) {
    return refused(
      "node_test",
      "inconsistent",
      `node:test summary says ${v("tests")} tests but the report lists ${points + filesWithoutTests.length + loadErrors}`,
      failures,
    );
  }
  return accepted(
    "node_test",
    {
      passed: v("pass") - filesWithoutTests.length,
      failed: v("fail") - loadErrors,
      cancelled: v("cancelled"),
      skipped: v("skipped"),
      todo: v("todo"),
    },
    { failures: failures.filter((f) => !isFileEntry(f.name)), files_without_tests: filesWithoutTests, listed: list.done(points === expected) },
  );
}

function isFileEntry(name: string): boolean {
  return /^\/.*\.[cm]?[jt]s$/.test(name);
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
