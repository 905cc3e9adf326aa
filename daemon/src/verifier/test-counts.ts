/**
 * Counts from a node:test run (TAP `# tests 3` / spec `ℹ tests 3` summary lines).
 * Kept deliberately small: the verifier only needs the summary. Absent summary
 * lines read as 0 discovered, which the verifier treats as "no evidence".
 * Injected through VerifierDeps.parseTestOutput so the runner parser of the
 * run_tests tool can be used instead.
 */
export interface TestCounts {
  discovered: number;
  passed: number;
  failed: number;
}

function lastCount(text: string, key: string): number | null {
  const re = new RegExp(`^\\s*(?:#|ℹ)\\s+${key}\\s+(\\d+)\\s*$`, "gm");
  let found: number | null = null;
  for (const m of text.matchAll(re)) found = Number(m[1]);
  return found;
}

export function parseNodeTestSummary(stdout: string): TestCounts {
  const discovered = lastCount(stdout, "tests") ?? 0;
  const passed = lastCount(stdout, "pass") ?? 0;
  const failed = (lastCount(stdout, "fail") ?? 0) + (lastCount(stdout, "cancelled") ?? 0);
  return { discovered, passed, failed };
}
