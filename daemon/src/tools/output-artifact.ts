import fs from "node:fs/promises";
import path from "node:path";
import type { SandboxResult } from "../contracts/sandbox.js";
import { type KnownSecrets, redactText } from "../redact/index.js";

/**
 * The full output of a run's latest test commands, kept as a file the user can read (`status`
 * and `trace` print where). The model and the trace see only a tail (limits.testOutputBytes);
 * when a suite fails, or its output passed the capture cap while its report decided the verdict,
 * a person needs all of it. Bounded on disk: one file per kind, each replaced by the next run
 * of that kind and no larger than the executor's capture cap (16 MiB for a report on stdout);
 * kept in the run's control dir, so `gc` removes it with the run.
 */
export const TEST_OUTPUT_KINDS = ["run_tests", "verifier"] as const;
export type TestOutputKind = (typeof TEST_OUTPUT_KINDS)[number];

export function testOutputPath(controlDir: string, kind: TestOutputKind): string {
  return path.join(controlDir, "test-output", `${kind}.log`);
}

/**
 * Writes what the command printed, as captured and redacted by the one rule set, whole or not at
 * all (temp file, then rename). Must not throw: output that cannot be kept changes no verdict.
 */
export async function keepTestOutput(
  controlDir: string,
  kind: TestOutputKind,
  res: Pick<SandboxResult, "stdout" | "stderr" | "truncated">,
  /** the daemon's live credentials, redacted as in every other sink (a test may print one it was handed) */
  known: KnownSecrets = [],
): Promise<void> {
  const file = testOutputPath(controlDir, kind);
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    const text =
      res.stdout +
      (res.stderr.length > 0 ? `\n[stderr]\n${res.stderr}` : "") +
      (res.truncated ? "\n[mini-agent: the output went over the capture cap here; the rest was not kept]\n" : "");
    await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    await fs.writeFile(tmp, redactText(text, known), { mode: 0o600 });
    await fs.rename(tmp, file);
  } catch {
    await fs.rm(tmp, { force: true }).catch(() => {});
  }
}
