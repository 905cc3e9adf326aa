import type { RuntimeDeps } from "./deps.js";

/**
 * What the run keeps of its `--sandbox-include` opt-in (issue 10): each time
 * opted-in paths enter a sandbox, a log line with the run id; the first time a
 * path goes in, a `sandbox_include` trace event with the globs and the paths
 * (never their contents). The trace itself says what was already recorded,
 * so a resumed run does not record a path twice. Must not throw: the
 * executor calls it after the copy went in.
 */
export function sandboxIncludeReporter(deps: RuntimeDeps, runId: string, globs: readonly string[]): (paths: string[]) => void {
  return (paths) => {
    try {
      deps.logger.info({ runId, globs, paths }, "opted-in paths copied into a sandbox (--sandbox-include)");
      deps.ledger.tx(() => {
        const recorded = new Set(
          deps.trace
            .since(runId, 0)
            .filter((e) => e.type === "sandbox_include")
            .flatMap((e) => (Array.isArray(e.payload.paths) ? (e.payload.paths as unknown[]) : [])),
        );
        const fresh = paths.filter((p) => !recorded.has(p));
        if (fresh.length > 0) deps.trace.append(runId, { type: "sandbox_include", payload: { globs: [...globs], paths: fresh } });
      });
    } catch (err) {
      deps.logger.error({ runId, err }, "the sandbox_include event could not be recorded");
    }
  };
}
