import type { Runtime, SandboxLimit, SandboxResult } from "../contracts/sandbox.js";
import type { RunOutcome } from "./exec-outcome.js";

/** Linux numbering: the sandbox is Linux whatever the host's own numbering is. */
const LINUX_SIGNALS = [
  "HUP",
  "INT",
  "QUIT",
  "ILL",
  "TRAP",
  "ABRT",
  "BUS",
  "FPE",
  "KILL",
  "USR1",
  "SEGV",
  "USR2",
  "PIPE",
  "ALRM",
  "TERM",
  "STKFLT",
  "CHLD",
  "CONT",
  "STOP",
  "TSTP",
  "TTIN",
  "TTOU",
  "URG",
  "XCPU",
  "XFSZ",
  "VTALRM",
  "PROF",
  "WINCH",
  "IO",
  "PWR",
  "SYS",
];

export function signalName(n: number): string {
  const name = LINUX_SIGNALS[n - 1];
  return name ? `SIG${name}` : `SIG${n}`;
}

/**
 * The limits a command ran into, each from its own real signal: the deadline
 * the host enforced, the output cap the host counted, OOM kills and refused
 * forks counted by the kernel (oom-watch.ts, spawn-proto.h). Never inferred
 * from exit codes or output.
 */
function limitsOf(o: RunOutcome): SandboxLimit[] {
  const limits: SandboxLimit[] = [];
  if (o.timedOut) limits.push("time");
  if (o.oomKilled) limits.push("memory");
  if ((o.pidsLimitHits ?? 0) > 0) limits.push("pids");
  if (o.truncated) limits.push("output");
  return limits;
}

export function toResult(o: RunOutcome, durationMs: number, digest: string, runtime: Runtime): SandboxResult {
  return {
    exit_code: o.exitCode,
    timed_out: o.timedOut,
    cancelled: o.cancelled,
    oom_killed: o.oomKilled,
    truncated: o.truncated,
    limits: limitsOf(o),
    signal: o.signal === null ? null : signalName(o.signal),
    sandbox_lost: o.spawnerLost,
    stdout: o.stdout,
    stderr: o.stderr,
    duration_ms: Math.round(durationMs),
    image_digest: digest,
    runtime,
  };
}
