/**
 * A report FILE (JUnit XML) is written by the test command inside the sandbox
 * and read back by the executor as data. This is the hand-over between the
 * two: the bytes, or why there are none. The parsers never touch a filesystem.
 */
import type { ReportFile } from "../../contracts/sandbox.js";
import type { TestReportKind } from "../../contracts/test-report.js";
import type { RefusalKind } from "./summary.js";

export type { ReportFile };

/**
 * Implemented by the executors (`SandboxRunRequest.reportFile`, sandbox/report-read.ts
 * for the container backend). Contract:
 * - the file is removed (or proven absent) BEFORE the command runs, so a report
 *   left by an earlier run in the same warm sandbox can never be read as this
 *   run's (a stale green report is a false green);
 * - read after the command ended, from the sandbox, never by following a
 *   symlink out of it; anything but a regular file is `unreadable`;
 * - at most `maxBytes + 1` bytes are read, so an oversized file is `too_large`
 *   without being held in memory;
 * - never throws: every failure is one of the statuses above.
 */
export interface ReportFileReader {
  readReport(path: string, maxBytes: number, signal?: AbortSignal): Promise<ReportFile>;
}

/** Where a preset's test command is asked to write its JUnit report (a tmpfs in the sandbox). */
export const DEFAULT_JUNIT_REPORT_PATH = "/tmp/mini-agent-junit.xml";
/** Where a jest command is asked to write its `--json` report. */
export const DEFAULT_JEST_REPORT_PATH = "/tmp/mini-agent-jest.json";

/**
 * The report file a parser reads, or null for one that reads stdout. node_test
 * reads stdout: `trusted_local` runs host processes and cannot read a sandbox
 * file, and the same preset argv must serve every backend (parsers/README.md).
 */
export function reportPathFor(kind: TestReportKind): string | null {
  switch (kind) {
    case "junit_xml":
      return DEFAULT_JUNIT_REPORT_PATH;
    case "jest_json":
      return DEFAULT_JEST_REPORT_PATH;
    case "node_test":
    case "go_test_json":
      return null;
  }
}

/** The refusal for a report that never reached the parser. */
export function reportFileRefusal(file: Exclude<ReportFile, { status: "read" }>, maxBytes: number): { refusal: RefusalKind; problem: string } {
  switch (file.status) {
    case "missing":
      return { refusal: "missing", problem: "the test command wrote no report file" };
    case "too_large":
      return {
        refusal: "too_large",
        problem: `the report file is larger than ${maxBytes} bytes${file.size === null ? "" : ` (${file.size} bytes)`}; it was not read`,
      };
    case "unreadable":
      return { refusal: "unreadable", problem: `the report file could not be read: ${file.reason}` };
  }
}
