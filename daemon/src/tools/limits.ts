import { MiniAgentError } from "../errors.js";

/** Every size cap the tools apply, in one place. Callers override single keys; unknown keys fail loudly. */
export const DEFAULT_TOOL_LIMITS = {
  /** read_file refuses files larger than this */
  readMaxFileBytes: 1_048_576,
  /** read_file returns complete lines up to this many bytes, then sets truncated */
  readMaxReturnBytes: 65_536,
  /** search keeps complete hits up to this many bytes of result, then sets truncated */
  searchMaxResultBytes: 16_384,
  /** a hit's snippet is the matching line cut to this many characters */
  searchSnippetChars: 200,
  /** files larger than this are skipped by search (and listed as skipped) */
  searchMaxFileBytes: 1_048_576,
  /** list_files returns this many files when the call names no limit */
  listDefaultFiles: 200,
  /** list_files keeps entries up to this many bytes of result, then sets truncated */
  listMaxResultBytes: 16_384,
  /** apply_patch refuses a file that would grow beyond this */
  patchMaxFileBytes: 1_048_576,
  /** show_diff returns at most this many bytes of diff, then sets truncated */
  diffMaxBytes: 65_536,
  /** run_tests returns at most this many bytes of runner output (tail) */
  testOutputBytes: 4_096,
  /**
   * what the executor may capture before cutting the stream; a preset whose report
   * is its stdout (node_test, go_test_json) may capture up to testReportMaxBytes
   * (run-tests.ts outputCapFor), so a large suite is never cut
   */
  runnerOutputCapBytes: 1_048_576,
  /** run_tests lists at most this many failing tests */
  testDiagnostics: 5,
  /** each failure message is cut to this many characters */
  diagnosticChars: 500,
  /**
   * a test report larger than this is refused unread (parsers/README.md): 16 MiB
   * holds a 7,000-test jest --json report (~2.5 MiB) or go test -json stream with
   * room; parsing 7,000 tests takes well under a second (scripts/bench-parsers.ts)
   */
  testReportMaxBytes: 16_777_216,
} as const;

export type ToolLimits = { -readonly [K in keyof typeof DEFAULT_TOOL_LIMITS]: number };

export function resolveLimits(overrides: Partial<ToolLimits> = {}): ToolLimits {
  const out: ToolLimits = { ...DEFAULT_TOOL_LIMITS };
  for (const [key, value] of Object.entries(overrides)) {
    if (!(key in DEFAULT_TOOL_LIMITS)) {
      throw new MiniAgentError("invalid_request", `unknown tool limit '${key}'; known: ${Object.keys(DEFAULT_TOOL_LIMITS).join(", ")}`);
    }
    if (value === undefined) continue;
    if (!Number.isInteger(value) || (value as number) < 1) {
      throw new MiniAgentError("invalid_request", `tool limit '${key}' must be a positive integer`);
    }
    out[key as keyof ToolLimits] = value as number;
  }
  return out;
}
