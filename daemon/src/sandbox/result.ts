import type { Runtime, SandboxResult } from "../contracts/sandbox.js";
import type { ExecOutcome } from "./exec-outcome.js";

export function toResult(o: ExecOutcome & { oomKilled: boolean }, durationMs: number, digest: string, runtime: Runtime): SandboxResult {
  return {
    exit_code: o.exitCode,
    timed_out: o.timedOut,
    cancelled: o.cancelled,
    oom_killed: o.oomKilled,
    truncated: o.truncated,
    stdout: o.stdout,
    stderr: o.stderr,
    duration_ms: Math.round(durationMs),
    image_digest: digest,
    runtime,
  };
}
