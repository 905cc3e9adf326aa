import picomatch from "picomatch";
import { isMiniAgentError } from "../errors.js";
import type { SandboxLimit, SandboxResult, SandboxRunRequest } from "../contracts/sandbox.js";
import type { PresetParser } from "../contracts/test-report.js";
import type { TaskSpec } from "../contracts/task-spec.js";
import type { ToolArgs, ToolResult } from "../contracts/tool-call.js";
import type { Executor, SandboxSession } from "../sandbox/executor.js";
import { createForbiddenMatcher } from "../workspace/forbidden.js";
import { normalizeRel } from "../workspace/safe-path.js";
import { walkTree } from "../workspace/walk.js";
import { exportSpecOf, toolEnv, type ToolContext } from "./context.js";
import type { ToolLimits } from "./limits.js";
import { errorResult, okResult } from "./result.js";
import { keepTestOutput } from "./output-artifact.js";
import { parserFor, reportPathFor, type TestFailure, type TestReportSummary } from "./parsers/index.js";
import {
  exitCodeOnlySummary,
  judgeAgainstBaseline,
  judgeTestRun,
  type BaselineTests,
  type BaselineVerdict,
  type TestRunFacts,
  type TestSummary,
} from "./test-verdict.js";
import { runnerError } from "./runner-error.js";
import type { RunnerError, TestDelta } from "../contracts/run-view.js";
import { dependencySkip } from "../workspace/dependency-dirs.js";
import { normalizeRunnerText } from "./runner-text.js";

export { normalizeRunnerText };

export interface RunTestsContext extends ToolContext {
  /** a fresh-container Executor, or the run's warm SandboxSession */
  runner: Executor | SandboxSession;
  runId: string;
  signal?: AbortSignal;
  /** the budget's min(remaining, per-call cap); the preset's own timeout also applies */
  timeoutMs: number;
  /** told which opted-in paths entered the sandbox (log and trace); must not throw */
  onSandboxInclude?: (paths: string[]) => void;
  /**
   * the preset's tests on the run's baseline (verifier/baseline-tests.ts, cached per
   * baseline): the result is judged against them as the Verifier judges it; absent: the
   * absolute rule alone
   */
  baseline?: (preset: string) => Promise<BaselineTests>;
}

export interface PresetInvocation {
  preset: string;
  argv: string[];
  /** workspace-relative files the globs matched, in glob order then path order */
  files: string[];
  /** globs that matched nothing: reported, never silently skipped */
  unmatched_globs: string[];
  timeoutMs: number;
}

/**
 * Expands a preset's `files` globs HOST-side over regular, non-forbidden,
 * non-linked files. Node 20's `node --test DIR` would not find tests/test_x.js
 * and exit 0 with 0 tests, so files are always named explicitly.
 */
export async function presetInvocation(task: TaskSpec, preset: string, workspaceRoot: string, controlDir?: string): Promise<PresetInvocation | null> {
  if (!Object.hasOwn(task.test_presets, preset)) return null;
  const spec = task.test_presets[preset]!;
  const forbidden = createForbiddenMatcher(task.forbidden);
  const dependencies = dependencySkip(workspaceRoot);
  const entries = await walkTree(workspaceRoot, {
    // a dependency's own test files are never the project's candidates (and its folder may be 150 MB)
    skip: (rel, type) => forbidden(rel) || type === "symlink" || type === "other" || dependencies(rel),
    excludeAbs: controlDir === undefined ? [] : [controlDir],
  });
  const candidates = entries.filter((e) => e.type === "file" && e.nlink === 1).map((e) => e.rel);
  const files: string[] = [];
  const unmatched: string[] = [];
  for (const glob of spec.files) {
    // a glob reaching outside the workspace is never expanded
    const safe = normalizeRel(glob);
    const isMatch = picomatch(glob, { dot: false });
    const hits = safe.ok ? candidates.filter((rel) => isMatch(rel)) : [];
    if (hits.length === 0) unmatched.push(glob);
    for (const h of hits) if (!files.includes(h)) files.push(h);
  }
  return {
    preset,
    argv: [...spec.command, ...files],
    files,
    unmatched_globs: unmatched,
    timeoutMs: spec.timeout_seconds * 1000,
  };
}

/**
 * What one preset's run is read as: its parser's summary (counts, first
 * failures, why a report was refused), or for an `exit_code` preset no count
 * at all (`exit_code_only`; only the exit status is judged).
 */
export type PresetSummary = TestReportSummary | (TestSummary & { exit_code_only: true; failures: TestFailure[]; files_without_tests: string[] });

/**
 * What run_tests tells the model and the trace. The per-test list (`cases`, up to
 * 50,000 ids) is left out: it is for comparing with the baseline, read from
 * summarizePreset; the load errors, few and bounded, are shown.
 */
export interface TestRunReport
  extends Omit<
    TestReportSummary,
    "failures" | "source" | "errors" | "build_failed" | "refusal" | "cases" | "cases_complete" | "load_error_count" | "load_errors"
  > {
  /** units that failed to load or build (never counted as tests); absent for exit_code */
  load_error_count?: number;
  /** the first of them with the runner's own first lines; absent for exit_code */
  load_errors?: TestReportSummary["load_errors"];
  /** the preset's parser: node_test, junit_xml, go_test_json, jest_json or exit_code */
  parser: PresetParser;
  /** JUnit <error> cases (already in `failed`); absent for exit_code */
  errors?: number;
  /** Go packages that failed to build (load errors, not tests); absent for exit_code */
  build_failed?: string[];
  /** why the parser refused the report, when it did */
  refusal?: TestReportSummary["refusal"];
  /** true for an `exit_code` preset: there is no test count, only the exit status (never "N tests passed") */
  exit_code_only?: true;
  exit_code: number | null;
  timed_out: boolean;
  cancelled_run: boolean;
  /** the RUNNER's output was cut: the summary cannot be trusted, never green */
  truncated: boolean;
  /** only the `output` tail shown here was shortened; says nothing about the run */
  output_truncated: boolean;
  /** limits the run ran into (time, memory, pids, output), each from a real signal */
  limits: SandboxLimit[];
  /** the signal that killed the test runner itself (e.g. "SIGKILL"); null when it exited */
  runner_signal: string | null;
  /** the sandbox itself stopped under the run: no status came back */
  sandbox_lost: boolean;
  diagnostics: TestFailure[];
  /** tail of stdout+stderr, capped */
  output: string;
  /** judgeAgainstBaseline / judgeTestRun (test-verdict.ts): nothing the run changed broke, skipped or removed a test; nothing cut short */
  green: boolean;
  /** the tests against the baseline's, when a baseline was given and the report names its tests */
  compare?: TestDelta;
  /** the runner's own first lines when it failed before or outside its tests */
  runner_error?: RunnerError;
  /** why not green, for the model and the log */
  verdict: string;
}

/** The last `maxBytes` of a text, on a character boundary; run_tests and run_command show output alike. */
export function tail(text: string, maxBytes: number): { text: string; cut: boolean } {
  const buf = Buffer.from(text, "utf8");
  if (buf.length <= maxBytes) return { text, cut: false };
  // drop a partial leading UTF-8 character rather than emit a replacement char
  let start = buf.length - maxBytes;
  while (start < buf.length && ((buf[start] as number) & 0xc0) === 0x80) start++;
  return { text: buf.subarray(start).toString("utf8"), cut: true };
}

/** what reaching a limit meant (time and output have verdicts of their own) */
const LIMIT_WORDS: Partial<Record<SandboxLimit, string>> = {
  memory: "memory (the kernel OOM-killed a process)",
  pids: "pids (a new process or thread was refused)",
};

/** "limits reached: ..." for the memory and pids limits a run ran into; null when none. run_tests and the Verifier say it alike. */
export function limitsReached(res: Pick<SandboxResult, "limits">): string | null {
  const reached = res.limits.flatMap((l) => LIMIT_WORDS[l] ?? []);
  return reached.length > 0 ? `limits reached: ${reached.join(", ")}` : null;
}

/**
 * What a sandbox result says about the run itself, for the one verdict (test-verdict.ts).
 * Cut output only matters when the counts come from it: a report FILE that was read
 * whole is the count however much the tests printed (a file over its cap is refused
 * by its parser as too_large).
 */
export function testRunFacts(res: SandboxResult): TestRunFacts {
  return {
    exit_code: res.exit_code,
    timed_out: res.timed_out,
    cancelled: res.cancelled,
    truncated: res.truncated && res.report?.status !== "read",
    signal: res.signal,
    sandbox_lost: res.sandbox_lost,
    limits_note: limitsReached(res),
  };
}

/**
 * The report file the executor must read back for a preset: junit_xml and
 * jest_json have one (the command writes it at the parser's path in the
 * sandbox, parsers/report-file.ts); the others read stdout/stderr.
 */
export function reportFileFor(parser: PresetParser, limits: Pick<ToolLimits, "testReportMaxBytes">): SandboxRunRequest["reportFile"] {
  const path = parser === "exit_code" ? null : reportPathFor(parser);
  return path === null ? undefined : { path, maxBytes: limits.testReportMaxBytes };
}

/**
 * The stdout a run may capture: a parser whose report IS stdout (node_test TAP,
 * go test -json; Go has no report-file flag) gets the report cap, so a suite of
 * thousands of tests is never cut and judged "truncated"; others the runner cap.
 */
export function outputCapFor(parser: PresetParser, limits: Pick<ToolLimits, "runnerOutputCapBytes" | "testReportMaxBytes">): number {
  const stdoutIsReport = parser === "node_test" || parser === "go_test_json";
  return stdoutIsReport ? Math.max(limits.runnerOutputCapBytes, limits.testReportMaxBytes) : limits.runnerOutputCapBytes;
}

type SummaryLimits = Pick<ToolLimits, "testDiagnostics" | "diagnosticChars" | "testReportMaxBytes">;

/** A runner result read by the preset's own parser; run_tests and the Verifier both read it through here. */
export function summarizePreset(parser: PresetParser, res: SandboxResult, limits: SummaryLimits): PresetSummary {
  if (parser === "exit_code") return { ...exitCodeOnlySummary(), failures: [], files_without_tests: [], exit_code_only: true };
  return parserFor(parser)(
    { stdout: res.stdout, stderr: res.stderr, ...(res.report && { report: res.report }) },
    { maxFailures: limits.testDiagnostics, maxMessageChars: limits.diagnosticChars, maxReportBytes: limits.testReportMaxBytes },
  );
}

/** Judges one runner result the same way for run_tests and the Verifier. */
export function summarizeTestRun(
  res: SandboxResult,
  limits: Pick<ToolLimits, "testOutputBytes" | "testDiagnostics" | "diagnosticChars" | "testReportMaxBytes">,
  parser: PresetParser = "node_test",
  baseline?: BaselineTests,
): TestRunReport {
  const parsed = summarizePreset(parser, res, limits);
  const combined = normalizeRunnerText(res.stderr.length > 0 ? `${res.stdout}\n[stderr]\n${res.stderr}` : res.stdout);
  const out = tail(combined, limits.testOutputBytes);
  const judged: BaselineVerdict =
    baseline === undefined ? { ...judgeTestRun(testRunFacts(res), parsed), delta: null } : judgeAgainstBaseline(testRunFacts(res), parsed, baseline);
  const failedOutside = runnerError(res, parsed);
  const extras =
    "source" in parsed
      ? {
          errors: parsed.errors,
          build_failed: parsed.build_failed,
          refusal: parsed.refusal,
          load_error_count: parsed.load_error_count,
          load_errors: parsed.load_errors,
        }
      : { exit_code_only: true as const };
  return {
    summary_found: parsed.summary_found,
    discovered: parsed.discovered,
    passed: parsed.passed,
    failed: parsed.failed,
    cancelled: parsed.cancelled,
    skipped: parsed.skipped,
    todo: parsed.todo,
    files_without_tests: parsed.files_without_tests,
    problem: parsed.problem,
    ...extras,
    parser,
    exit_code: res.exit_code,
    timed_out: res.timed_out,
    cancelled_run: res.cancelled,
    truncated: res.truncated,
    output_truncated: out.cut,
    limits: res.limits,
    runner_signal: res.signal,
    sandbox_lost: res.sandbox_lost,
    diagnostics: parsed.failures.map((f) => ({ name: normalizeRunnerText(f.name), message: normalizeRunnerText(f.message) })),
    output: out.text,
    green: judged.green,
    verdict: judged.message,
    ...(judged.delta !== null && { compare: judged.delta }),
    ...(failedOutside !== null && { runner_error: failedOutside }),
  };
}

/** What the model reads of the comparison: every count, and a few ids of each list that matters. */
export const MODEL_IDS_PER_LIST = 20;

function forModel(report: Partial<TestRunReport>): Partial<TestRunReport> & { against_baseline?: Record<string, unknown> } {
  const { compare, ...rest } = report;
  if (compare === undefined) return rest;
  const { pass_to_pass: _kept, new_passed: _new, counts, ...lists } = compare;
  const shown = Object.fromEntries(Object.entries(lists).map(([k, v]) => [k, Array.isArray(v) ? v.slice(0, MODEL_IDS_PER_LIST) : v]));
  return { ...rest, against_baseline: { ...shown, counts } };
}

/**
 * An exit-code-only run has no test count: its counts (all 0) are left out of
 * what the model, the trace and the run status read, so nothing can show it as
 * "0/0" or "N tests passed"; `exit_code_only` and the verdict say what it was.
 */
function withoutCountsIfExitCodeOnly(report: TestRunReport): Partial<TestRunReport> {
  if (!report.exit_code_only) return report;
  const { summary_found: _f, discovered: _d, passed: _p, failed: _x, cancelled: _c, skipped: _s, todo: _t, files_without_tests: _w, ...rest } = report;
  return rest;
}

function isSession(r: Executor | SandboxSession): r is SandboxSession {
  return typeof (r as SandboxSession).exec === "function";
}

/** run_tests: only presets the task names; runs through the sandbox runner, never on the host directly. */
export async function runTests(callId: string, args: ToolArgs<"run_tests">, ctx: RunTestsContext): Promise<ToolResult> {
  const env = toolEnv(ctx);
  const inv = await presetInvocation(ctx.task, args.preset, ctx.workspaceRoot, ctx.controlDir);
  if (inv === null) {
    return errorResult(callId, "unknown_preset", `no test preset '${args.preset}'; available: ${Object.keys(ctx.task.test_presets).join(", ")}`);
  }
  // with no file arguments `node --test` falls back to its own discovery and runs
  // something else entirely; a preset whose globs match nothing is refused instead
  if (ctx.task.test_presets[inv.preset]!.files.length > 0 && inv.files.length === 0) {
    return errorResult(callId, "not_found", `the preset's test globs match no files: ${inv.unmatched_globs.join(", ")}`, {
      preset: inv.preset,
      files: [],
      unmatched_globs: inv.unmatched_globs,
      discovered: 0,
    });
  }
  const timeoutMs = Math.max(1, Math.min(inv.timeoutMs, ctx.timeoutMs));
  const parser = ctx.task.test_presets[inv.preset]!.parser;
  const reportFile = reportFileFor(parser, env.limits);
  const req = {
    purpose: "candidate" as const,
    argv: inv.argv,
    workspaceDir: ctx.workspaceRoot,
    exportSpec: exportSpecOf(ctx),
    ...(ctx.onSandboxInclude && { onIncluded: ctx.onSandboxInclude }),
    env: {},
    timeoutMs,
    outputCapBytes: outputCapFor(parser, env.limits),
    signal: ctx.signal,
    ...(reportFile && { reportFile }),
  };
  let res: SandboxResult;
  try {
    res = isSession(ctx.runner) ? await ctx.runner.exec(req) : await ctx.runner.run({ ...req, runId: ctx.runId });
  } catch (err) {
    if (isMiniAgentError(err)) return errorResult(callId, err.code, err.message);
    return errorResult(callId, "sandbox_error", "the sandbox failed to run the tests");
  }
  await keepTestOutput(ctx.controlDir, "run_tests", res, ctx.knownSecrets?.() ?? []);
  // the baseline is asked for only when the result names its tests: an exit-code-only preset has nothing to compare
  const before = ctx.baseline && parser !== "exit_code" && !res.cancelled ? await ctx.baseline(inv.preset).catch(() => undefined) : undefined;
  const report = summarizeTestRun(res, env.limits, parser, before);
  const data = {
    preset: inv.preset,
    files: inv.files,
    unmatched_globs: inv.unmatched_globs,
    ...forModel(withoutCountsIfExitCodeOnly(report)),
    // a test that reads a linked fixture fails without it: the model and the user see which links stayed out, and why
    ...(res.links_left_out && { links_left_out: res.links_left_out }),
  };
  const truncated = report.truncated || report.output_truncated;
  if (report.green) return okResult(callId, data, truncated);
  const code = report.cancelled_run ? "cancelled" : "tests_failed";
  const unmatched = inv.unmatched_globs.length > 0 ? ` (globs matching nothing: ${inv.unmatched_globs.join(", ")})` : "";
  return errorResult(callId, code, `${report.verdict}${unmatched}`, data, truncated);
}
