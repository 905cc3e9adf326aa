/**
 * A strict parser for Node's node:test TAP output (`--test-reporter=tap`).
 * Counts come ONLY from the runner's final summary block; a missing, partial
 * or self-contradicting summary means 0 discovered, never a guess. Text a test
 * prints is escaped by the runner (`# \# pass 99`), so it cannot forge the block.
 * A test file that exits 0 without running a test (e.g. code it imports calls
 * process.exit(0)) is reported by the runner as ONE passing test named by the
 * file's path; it is not counted (see `files_without_tests`).
 * The Verifier reuses this parser; both judge its summary with judgeTestRun.
 */
import type { TestSummary } from "./test-verdict.js";

export interface TestFailure {
  name: string;
  message: string;
}

/** The node:test reading of a run: the parser-neutral counts (judged by test-verdict.ts) plus the first failures. */
export interface TestOutputSummary extends TestSummary {
  /** first failing tests in output order, capped */
  failures: TestFailure[];
  /**
   * test files that exited 0 without running a test: the runner counts each as
   * one passing test named by its path; here they are taken out of
   * `discovered` and `passed`.
   */
  files_without_tests: string[];
}

export interface ParseOptions {
  maxFailures?: number;
  maxMessageChars?: number;
}

const SUMMARY_KEYS = ["tests", "suites", "pass", "fail", "cancelled", "skipped", "todo", "duration_ms"] as const;

function empty(problem: string, failures: TestFailure[]): TestOutputSummary {
  return { summary_found: false, discovered: 0, passed: 0, failed: 0, cancelled: 0, skipped: 0, todo: 0, failures, files_without_tests: [], problem };
}

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

export function parseNodeTestOutput(output: string, opts: ParseOptions = {}): TestOutputSummary {
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
  if (start === -1) return empty("no node:test summary in the output", failures);
  const values: Record<string, number> = {};
  for (let k = 0; k < SUMMARY_KEYS.length; k++) {
    const key = SUMMARY_KEYS[k] as string;
    const m = new RegExp(`^# ${key} (\\d+(?:\\.\\d+)?)$`).exec(lines[start + k] ?? "");
    if (!m) return empty(`node:test summary is incomplete (no '# ${key}' line in order)`, failures);
    values[key] = Number(m[1]);
  }
  const v = (k: string): number => values[k] as number;
  if (v("pass") + v("fail") + v("cancelled") + v("skipped") + v("todo") !== v("tests")) {
    return empty("node:test summary counts do not add up", failures);
  }
  const filesWithoutTests = lines.slice(0, start).flatMap((l) => {
    const m = FILE_ENTRY.exec(l);
    return m ? [unescapeName(m[1] as string)] : [];
  });
  if (filesWithoutTests.length > v("pass")) return empty("node:test summary counts do not add up", failures);
  return {
    summary_found: true,
    discovered: v("tests") - filesWithoutTests.length,
    passed: v("pass") - filesWithoutTests.length,
    failed: v("fail"),
    cancelled: v("cancelled"),
    skipped: v("skipped"),
    todo: v("todo"),
    failures,
    files_without_tests: filesWithoutTests,
    problem: null,
  };
}
