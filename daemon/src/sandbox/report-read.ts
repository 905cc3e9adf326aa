import type { ReportFile } from "../contracts/sandbox.js";
import { MiniAgentError } from "../errors.js";
import type { ExecOutcome } from "./exec-outcome.js";
import { IN_IMAGE } from "./host-config.js";
import type { SandboxContainer } from "./sandbox-container.js";

/**
 * Reads a test command's report file (e.g. JUnit XML) back from its sandbox as
 * data (tools/parsers/report-file.ts has the contract). The file lives in the
 * sandbox's /tmp, a tmpfs the Engine's archive API cannot read (also not under
 * gVisor, whose tmpfs lives in its own kernel), so the image's relay reads it:
 * `run --read-report PATH MAXBYTES` (sandbox-image/helper/run.c) opens it
 * without following a link or blocking on a FIFO, refuses anything but a
 * regular file and writes at most MAXBYTES to stdout. It runs no command.
 *
 * Called right after the command and before the sandbox is settled (which
 * empties /tmp) or removed; a fresh tmpfs per sandbox and the proven /tmp
 * emptying of a warm one's settle are what make a report always the last
 * command's own. Never throws.
 */

/** run.c's exit codes for --read-report (spawn-proto.h) */
export const READ_REPORT_EXIT = { read: 0, missing: 10, tooLarge: 11, unreadable: 12 } as const;

/** stderr of the helper beyond this is not kept (it says a reason or a size) */
const STDERR_ROOM = 4096;

export interface ReportReadRequest {
  path: string;
  maxBytes: number;
}

/** Runs the helper in `box` (a control exec) and turns its answer into a ReportFile. */
export async function readReportIn(box: SandboxContainer, req: ReportReadRequest, timeoutMs: number): Promise<ReportFile> {
  let o: ExecOutcome;
  try {
    o = await box.control({
      argv: [...IN_IMAGE.readReport, req.path, String(req.maxBytes)],
      env: [],
      timeoutMs,
      capBytes: req.maxBytes + STDERR_ROOM,
      // a read that hangs leaves a sandbox nobody can trust: it goes
      onStop: () => box.kill(),
    });
  } catch (err) {
    return { status: "unreadable", reason: `the sandbox could not be asked for the report (${(err as { code?: string }).code ?? "engine error"})` };
  }
  return reportFromOutcome(o, req.maxBytes);
}

/** The helper's answer as a ReportFile; anything unexpected is `unreadable`, never bytes. */
export function reportFromOutcome(o: ExecOutcome, maxBytes: number): ReportFile {
  const why = o.stderr.trim().slice(0, 200);
  if (o.timedOut) return { status: "unreadable", reason: "reading the report timed out" };
  if (o.cancelled) return { status: "unreadable", reason: "cancelled while reading the report" };
  if (o.spawnerLost) return { status: "unreadable", reason: "the sandbox stopped while the report was read" };
  switch (o.exitCode) {
    case READ_REPORT_EXIT.read: {
      const bytes = o.stdoutBytes ?? Buffer.from(o.stdout, "utf8");
      // the capture holds maxBytes + room; more than maxBytes here means the read-back itself is not whole
      if (o.truncated || bytes.length > maxBytes) return { status: "unreadable", reason: "the report read back was cut short" };
      return { status: "read", bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length) };
    }
    case READ_REPORT_EXIT.missing:
      return { status: "missing" };
    case READ_REPORT_EXIT.tooLarge: {
      const size = /^\d+$/.test(why) ? Number(why) : null;
      return { status: "too_large", size: size !== null && Number.isSafeInteger(size) ? size : null };
    }
    case READ_REPORT_EXIT.unreadable:
      return { status: "unreadable", reason: why === "" ? "unreadable" : why };
    default:
      return { status: "unreadable", reason: `the report reader exited ${o.exitCode ?? "without a status"}${why === "" ? "" : `: ${why}`}` };
  }
}

/** What a result carries when the command did not end normally: no report is read from a killed or lost sandbox. */
export const NOT_READ_AFTER_STOP: ReportFile = { status: "unreadable", reason: "the command did not finish, so no report was read" };

/**
 * A report path the helper may be asked for: absolute, plain (no `..`, no
 * control characters) and a size cap it accepts. Checked before anything is
 * created, so a bad request changes nothing.
 */
export function checkReportRequest(req: ReportReadRequest | undefined): void {
  if (req === undefined) return;
  const plain = req.path.startsWith("/") && !req.path.split("/").includes("..") && !/[\u0000-\u001f\u007f]/.test(req.path) && req.path.length <= 1024;
  if (!plain)
    throw new MiniAgentError("invalid_fields", `reportFile.path must be an absolute, plain path in the sandbox, not ${JSON.stringify(req.path.slice(0, 80))}`);
  if (!Number.isSafeInteger(req.maxBytes) || req.maxBytes < 1 || req.maxBytes > MAX_REPORT_CAP) {
    throw new MiniAgentError("invalid_fields", `reportFile.maxBytes must be a whole number from 1 to ${MAX_REPORT_CAP}`);
  }
}

/** what run.c accepts, and far more than any preset needs (tools/limits.ts testReportMaxBytes) */
const MAX_REPORT_CAP = 64 * 1024 * 1024;
