import type { SandboxResult } from "../contracts/sandbox.js";

/** Test kit: a sandbox result of a command that exited 0 with no output; `over` says what the case is about. */
export function sandboxResult(over: Partial<SandboxResult> = {}): SandboxResult {
  return {
    exit_code: 0,
    timed_out: false,
    cancelled: false,
    oom_killed: false,
    truncated: false,
    limits: [],
    signal: null,
    sandbox_lost: false,
    stdout: "",
    stderr: "",
    duration_ms: 1,
    image_digest: null,
    runtime: "runc",
    ...over,
  };
}
