import { describe, expect, it } from "vitest";
import { MiniAgentError } from "../errors.js";
import type { ExecOutcome } from "./exec-outcome.js";
import { checkReportRequest, reportFromOutcome } from "./report-read.js";

/**
 * How the helper's answer (`run --read-report`, exit code + streams) becomes a
 * ReportFile. The helper itself runs in real sandboxes in
 * tests/tools/report-formats.test.ts; here each answer is exact.
 */
const outcome = (o: Partial<ExecOutcome>): ExecOutcome => ({
  exitCode: 0,
  timedOut: false,
  cancelled: false,
  truncated: false,
  stdout: "",
  stderr: "",
  spawnerLost: false,
  ...o,
});

describe("reportFromOutcome", () => {
  it("exit 0: the captured BYTES, not the decoded text (a byte that is not UTF-8 survives)", () => {
    const bytes = Buffer.from([0x3c, 0xff, 0x00, 0x3e]);
    expect(reportFromOutcome(outcome({ stdout: "<\ufffd\u0000>", stdoutBytes: bytes }), 100)).toEqual({ status: "read", bytes: new Uint8Array(bytes) });
  });

  it("exit 0 with a capture that was cut or longer than the cap is unreadable, never a partial report", () => {
    expect(reportFromOutcome(outcome({ stdoutBytes: Buffer.from("abc"), truncated: true }), 100)).toMatchObject({ status: "unreadable" });
    expect(reportFromOutcome(outcome({ stdoutBytes: Buffer.from("abcdef") }), 5)).toMatchObject({ status: "unreadable" });
  });

  it("the helper's exit codes: 10 missing, 11 too large with the size it printed, 12 unreadable with its reason", () => {
    expect(reportFromOutcome(outcome({ exitCode: 10 }), 100)).toEqual({ status: "missing" });
    expect(reportFromOutcome(outcome({ exitCode: 11, stderr: "3145728\n" }), 100)).toEqual({ status: "too_large", size: 3145728 });
    expect(reportFromOutcome(outcome({ exitCode: 11, stderr: "huge\n" }), 100)).toEqual({ status: "too_large", size: null });
    expect(reportFromOutcome(outcome({ exitCode: 12, stderr: "not a regular file\n" }), 100)).toEqual({ status: "unreadable", reason: "not a regular file" });
  });

  it("anything else (an old image without the mode, a timeout, a lost sandbox) is unreadable, never bytes", () => {
    expect(reportFromOutcome(outcome({ exitCode: 2, stdoutBytes: Buffer.from("<x/>"), stderr: "usage: run -- ARGV..." }), 100)).toMatchObject({
      status: "unreadable",
      reason: expect.stringMatching(/exited 2: usage/),
    });
    expect(reportFromOutcome(outcome({ exitCode: null, timedOut: true }), 100)).toMatchObject({ status: "unreadable" });
    expect(reportFromOutcome(outcome({ exitCode: null, spawnerLost: true }), 100)).toMatchObject({ status: "unreadable" });
  });
});

describe("checkReportRequest", () => {
  it("accepts an absolute plain path and a sane cap, and nothing else", () => {
    expect(() => checkReportRequest({ path: "/tmp/mini-agent-junit.xml", maxBytes: 2_097_152 })).not.toThrow();
    expect(() => checkReportRequest(undefined)).not.toThrow();
    for (const bad of [
      { path: "tmp/x.xml", maxBytes: 10 },
      { path: "/tmp/../etc/passwd", maxBytes: 10 },
      { path: "/tmp/x\n.xml", maxBytes: 10 },
      { path: "/tmp/x.xml", maxBytes: 0 },
      { path: "/tmp/x.xml", maxBytes: 1.5 },
    ]) {
      expect(() => checkReportRequest(bad)).toThrow(MiniAgentError);
    }
  });
});
