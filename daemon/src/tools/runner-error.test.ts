import { describe, expect, it } from "vitest";
import { runnerError } from "./runner-error.js";
import type { TestSummary } from "./test-verdict.js";

const NONE: TestSummary = {
  summary_found: false,
  discovered: 0,
  passed: 0,
  failed: 0,
  cancelled: 0,
  skipped: 0,
  todo: 0,
  files_without_tests: [],
  problem: "the JUnit report is missing",
};

describe("runnerError: the runner's own first lines when it failed before or outside its tests", () => {
  it("regression: a missing shared library is named (it showed as '0/0 passed, runner exited 127')", () => {
    const e = runnerError(
      {
        stdout: "",
        stderr: "node: error while loading shared libraries: librt.so.1: cannot open shared object file: No such file or directory\n",
        exit_code: 127,
        signal: null,
      },
      NONE,
    );
    expect(e).toEqual({
      summary: "no test report (the JUnit report is missing); the runner exited with code 127",
      lines: ["node: error while loading shared libraries: librt.so.1: cannot open shared object file: No such file or directory"],
    });
  });

  it("four collection errors are said as such, each with its module's words, never as tests", () => {
    const e = runnerError(
      { stdout: "", stderr: "", exit_code: 2, signal: null },
      {
        ...NONE,
        summary_found: true,
        problem: null,
        load_error_count: 4,
        load_errors: [
          { unit: "tests/test_a.py", message: "ImportError while importing test module\nModuleNotFoundError: No module named 'yaml'" },
          { unit: "tests/test_b.py", message: "ModuleNotFoundError: No module named 'yaml'" },
        ],
      },
    );
    expect(e?.summary).toBe("4 collection errors (a test file or package that could not load)");
    expect(e?.load_error_count).toBe(4);
    // the exception the traceback ends with first, then how it began
    expect(e?.lines).toEqual([
      "tests/test_a.py: ModuleNotFoundError: No module named 'yaml'",
      "  ImportError while importing test module",
      "tests/test_b.py: ModuleNotFoundError: No module named 'yaml'",
    ]);
  });

  it("prefers error-looking lines, strips terminal escapes and redacts a credential the output carried", () => {
    const e = runnerError(
      {
        stdout: "",
        stderr:
          "collecting...\n\x1b[31mOSError: [Errno 28] No space left on device\x1b[0m\nAuthorization: Bearer sk-abcdefghijklmnopqrstuvwxyz0123456789 error\n",
        exit_code: 1,
        signal: null,
      },
      NONE,
    );
    expect(e?.lines[0]).toBe("OSError: [Errno 28] No space left on device");
    expect(e?.lines.join("\n")).not.toContain("sk-abcdefghijklmnopqrstuvwxyz0123456789");
    expect(e?.lines.join("\n")).not.toContain("\x1b");
  });

  it("regression: every test passed and the runner exited 1 for an error outside them (vitest's typecheck could not write into the read-only layer); only 'exited 1 though no test failed' was said, now its own words are", () => {
    const stderr = [
      "Testing types with tsc and vue-tsc is an experimental feature.",
      " Unhandled Errors ",
      "Vitest caught 1 unhandled error during the test run.",
      "Error: error TS5033: Could not write file '/workspace/node_modules/vitest/dist/tsconfig.tmp.tsbuildinfo': EROFS: read-only file system",
    ].join("\n");
    const e = runnerError({ stdout: "", stderr, exit_code: 1, signal: null }, { ...NONE, summary_found: true, problem: null, discovered: 488, passed: 488 });
    expect(e).toEqual({
      summary: "the runner exited with code 1 though no test failed",
      lines: [
        " Unhandled Errors",
        "Vitest caught 1 unhandled error during the test run.",
        "Error: error TS5033: Could not write file '/workspace/node_modules/vitest/dist/tsconfig.tmp.tsbuildinfo': EROFS: read-only file system",
      ],
    });
    // exit 0, or killed (said by the verdict itself): nothing more to say here
    expect(
      runnerError({ stdout: "", stderr, exit_code: 0, signal: null }, { ...NONE, summary_found: true, problem: null, discovered: 1, passed: 1 }),
    ).toBeNull();
  });

  it("a suite whose tests ran is not a runner error: its failures are the diagnostics", () => {
    expect(
      runnerError(
        { stdout: "", stderr: "boom", exit_code: 1, signal: null },
        { ...NONE, summary_found: true, problem: null, discovered: 3, passed: 2, failed: 1 },
      ),
    ).toBeNull();
  });
});
