/**
 * What the model, the trace and a test report's ids see of runner text:
 * sandbox copy locations folded to /workspace and /control (a trusted_local
 * copy lives under a host temp dir, which must not leak) and per-run timings
 * dropped, so the same run shows the same text every time. Its own module so
 * the parsers (test ids) and run_tests (output) share it without a cycle.
 */
export function normalizeRunnerText(text: string): string {
  return text.replace(/(?:file:\/\/)?\/[^\s'"()`]*?\/(workspace|control)(?=\/)/g, "/$1").replace(/^[ \t]*(?:# )?duration_ms:? [0-9.]+\r?\n/gm, "");
}
