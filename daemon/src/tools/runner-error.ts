/**
 * The runner's own words when it failed before or outside its tests: a missing
 * module, a missing shared library, "no space left on device", a report never
 * written. These once showed only as "0/4 passed" or an empty `sandbox_error`,
 * and the reason sat in the trace's JSON. run_tests, the Verifier's evidence and
 * through them `run`, `status`, `why` and the eval report show the first lines:
 * bounded, redacted, without control characters (the text comes from code under
 * test and lands in a terminal).
 */
import type { RunnerError } from "../contracts/run-view.js";
import type { SandboxResult } from "../contracts/sandbox.js";
import { redactText } from "../redact/index.js";
import type { TestSummary } from "./test-verdict.js";

export const RUNNER_ERROR_LINES = 12;
export const RUNNER_ERROR_LINE_CHARS = 240;

/** One line a terminal shows as it is: no escape sequences, no carriage returns, bounded. */
function clean(line: string): string {
  const plain = line.replace(/\x1b\[[0-9;?]*[ -/]*[@-~]/g, "").replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, "");
  const cut = plain.length > RUNNER_ERROR_LINE_CHARS ? `${plain.slice(0, RUNNER_ERROR_LINE_CHARS)}…` : plain;
  return redactText(cut.trimEnd());
}

/** The first non-empty lines of a text, cleaned. */
export function firstLines(text: string, max = RUNNER_ERROR_LINES): string[] {
  const out: string[] = [];
  for (const raw of text.split(/\r?\n/)) {
    if (raw.trim() === "") continue;
    out.push(clean(raw));
    if (out.length >= max) break;
  }
  return out;
}

/**
 * Lines that explain a failure best: error-looking lines of stderr first (a
 * traceback's last line, "error while loading shared libraries"), else its head.
 */
function explaining(res: Pick<SandboxResult, "stdout" | "stderr">): string[] {
  const text = res.stderr.trim() !== "" ? res.stderr : res.stdout;
  const all = text.split(/\r?\n/).filter((l) => l.trim() !== "");
  const errorish = all.filter((l) => /error|cannot|can't|could not|no such|not found|no space|denied|missing|killed|fatal|panic/i.test(l));
  const picked = errorish.length > 0 ? errorish : all;
  return picked.slice(0, RUNNER_ERROR_LINES).map(clean);
}

/** The last line that names an exception or an error (a traceback's last word), cleaned; null when none does. */
function keyLine(text: string): string | null {
  const lines = text.split(/\r?\n/).map((l) => l.replace(/^E\s+/, "").trim());
  for (let i = lines.length - 1; i >= 0; i--) {
    const l = lines[i]!;
    if (/^[\w.]*(Error|Exception)\b|\berror:|cannot find|undefined:|no such file/i.test(l)) return clean(l);
  }
  return null;
}

/** What failed before or outside the tests, or null when the tests themselves ran (their failures are the diagnostics). */
export function runnerError(res: Pick<SandboxResult, "stdout" | "stderr" | "exit_code" | "signal">, s: TestSummary): RunnerError | null {
  const loadErrors = s.load_error_count ?? 0;
  if (loadErrors > 0) {
    const lines = (s.load_errors ?? []).flatMap((e) => {
      const first = firstLines(e.message, 3);
      const key = keyLine(e.message);
      // the exception a traceback ends with says most ("ModuleNotFoundError: No module named 'yaml'"); then how it began
      return [
        `${clean(e.unit)}: ${key ?? first[0] ?? "could not load"}`,
        ...first
          .filter((l) => l !== key)
          .slice(0, 2)
          .map((l) => `  ${l}`),
      ];
    });
    return {
      summary: `${loadErrors} collection error${loadErrors === 1 ? "" : "s"} (a test file or package that could not load)`,
      lines: lines.slice(0, RUNNER_ERROR_LINES),
      load_error_count: loadErrors,
    };
  }
  if (s.exit_code_only) {
    if (res.exit_code === 0 && res.signal === null) return null;
    return { summary: res.signal ? `the command was killed by ${res.signal}` : `the command exited with code ${res.exit_code}`, lines: explaining(res) };
  }
  if (s.summary_found) {
    // every test it reported passed (or was skipped) and the runner still failed: the reason is outside the
    // tests (vitest's unhandled errors, a typecheck that could not write), and only its output says it
    if (s.failed + s.cancelled > 0 || res.signal || res.exit_code === 0 || res.exit_code === null) return null;
    return { summary: `the runner exited with code ${res.exit_code} though no test failed`, lines: explaining(res) };
  }
  const what = s.problem ? `no test report (${s.problem})` : "no test report";
  const exit = res.signal
    ? `; the runner was killed by ${res.signal}`
    : res.exit_code !== null && res.exit_code !== 0
      ? `; the runner exited with code ${res.exit_code}`
      : "";
  return { summary: `${what}${exit}`, lines: explaining(res) };
}
