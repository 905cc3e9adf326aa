/**
 * jest's own machine-readable report (`jest --json --outputFile=FILE`), read
 * from the report FILE the command wrote in the sandbox. jest-junit is a
 * separate package that takes its path from the environment, which a preset
 * cannot set; `--json` is part of jest itself.
 *
 * Rules:
 * - A test is one entry of a file's `assertionResults`; its id is
 *   `file > ancestorTitles > title`, the file relative to the workspace.
 * - passed -> passed; failed -> failed; pending, skipped, disabled -> skipped;
 *   todo -> todo. Any other status is not a report we know: unparsable.
 * - A test file that failed to run (`testExecError`, or a failed file with a
 *   `message` and no assertion results: a missing module, a top-level throw) is
 *   a load error named by the file, never a test.
 * - The report's own totals (numTotalTests, numPassedTests, ...) must equal
 *   the counts of the tests it lists, or it is refused as inconsistent.
 */
import { z } from "zod";
import { CaseList } from "./cases.js";
import { reportFileRefusal, type ReportFile } from "./report-file.js";
import { accepted, cap, refused, resolveParseOptions, type ReportParseOptions, type TestFailure, type TestReportSummary } from "./summary.js";

const Count = z.int().nonnegative();

/** unknown fields are dropped: jest adds some between versions; what is read is checked */
const Assertion = z.object({
  ancestorTitles: z.array(z.string()),
  title: z.string(),
  status: z.string(),
  failureMessages: z.array(z.string()).nullish(),
});

const FileResult = z.object({
  name: z.string(),
  status: z.string(),
  message: z.string().nullish(),
  assertionResults: z.array(Assertion),
  testExecError: z.object({ message: z.string().nullish() }).passthrough().nullish(),
});

const JestReport = z.object({
  numTotalTests: Count,
  numPassedTests: Count,
  numFailedTests: Count,
  numPendingTests: Count,
  numTodoTests: Count,
  numRuntimeErrorTestSuites: Count,
  testResults: z.array(FileResult),
});

const OUTCOME = {
  passed: "passed",
  failed: "failed",
  pending: "skipped",
  skipped: "skipped",
  disabled: "skipped",
  todo: "todo",
} as const;

/** The sandbox's workspace is /workspace: ids name files relative to it, as vitest's report does. */
function relativeFile(name: string): string {
  return name.replace(/^(?:\/[^\s]*?)?\/workspace\//, "");
}

export function parseJestJson(file: ReportFile, opts: ReportParseOptions = {}): TestReportSummary {
  const o = resolveParseOptions(opts);
  if (file.status !== "read") {
    const r = reportFileRefusal(file, o.maxReportBytes);
    return refused("jest_json", r.refusal, r.problem);
  }
  if (file.bytes.byteLength > o.maxReportBytes) {
    return refused("jest_json", "too_large", `the report is ${file.bytes.byteLength} bytes, over the ${o.maxReportBytes}-byte cap; it was not parsed`);
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(file.bytes);
  } catch {
    return refused("jest_json", "unparsable", "the report is not UTF-8 text");
  }
  if (text.trim() === "") return refused("jest_json", "empty", "the report file is empty");
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    // jest writes the file in one piece; JSON that stops early is a cut file
    const open = text.trimEnd();
    if (!open.endsWith("}")) return refused("jest_json", "truncated", "the jest report ends before its JSON is complete");
    return refused("jest_json", "unparsable", "the report is not JSON");
  }
  const parsed = JestReport.safeParse(raw);
  if (!parsed.success)
    return refused("jest_json", "unparsable", `not a jest --json report (${z.prettifyError(parsed.error).split("\n").slice(0, 2).join(" ")})`);
  return summarize(parsed.data, o);
}

function summarize(report: z.infer<typeof JestReport>, o: Required<ReportParseOptions>): TestReportSummary {
  const cases = new CaseList();
  const failures: TestFailure[] = [];
  const n = { passed: 0, failed: 0, skipped: 0, todo: 0 };
  for (const f of report.testResults) {
    const fileId = relativeFile(f.name);
    const execError = f.testExecError?.message ?? "";
    if (f.assertionResults.length === 0 && (f.testExecError != null || (f.status === "failed" && (f.message ?? "") !== ""))) {
      cases.loadError(fileId, execError !== "" ? execError : (f.message ?? ""));
      continue;
    }
    for (const a of f.assertionResults) {
      if (!Object.hasOwn(OUTCOME, a.status))
        return refused("jest_json", "unparsable", `a test has the status "${a.status.slice(0, 40)}", which jest does not write`);
      const outcome = OUTCOME[a.status as keyof typeof OUTCOME];
      n[outcome]++;
      const id = [fileId, ...a.ancestorTitles, a.title].join(" > ");
      cases.add(id, outcome === "todo" ? "skipped" : outcome);
      if (outcome === "failed" && failures.length < o.maxFailures) {
        failures.push({
          name: cap([...a.ancestorTitles, a.title].join(" > "), o.maxMessageChars),
          message: cap((a.failureMessages ?? []).join("\n").trim(), o.maxMessageChars),
        });
      }
    }
  }
  const claims: [string, number, number][] = [
    ["numTotalTests", report.numTotalTests, n.passed + n.failed + n.skipped + n.todo],
    ["numPassedTests", report.numPassedTests, n.passed],
    ["numFailedTests", report.numFailedTests, n.failed],
    ["numPendingTests", report.numPendingTests, n.skipped],
    ["numTodoTests", report.numTodoTests, n.todo],
  ];
  for (const [key, claimed, found] of claims) {
    if (claimed !== found) return refused("jest_json", "inconsistent", `the jest report says ${key}=${claimed} but lists ${found}`, failures);
  }
  return accepted("jest_json", { passed: n.passed, failed: n.failed, skipped: n.skipped, todo: n.todo }, { failures, listed: cases.done() });
}
