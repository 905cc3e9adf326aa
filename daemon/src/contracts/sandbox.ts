import { z } from "zod";

export const Runtime = z.enum(["runc", "runsc"]);
export type Runtime = z.infer<typeof Runtime>;

export const Backend = z.enum(["container", "trusted_local"]);
export type Backend = z.infer<typeof Backend>;

/** One command to run in the sandbox. Paths are host paths the executor copies IN; nothing is bind-mounted. */
export interface SandboxRunRequest {
  /** run id and purpose go on the container's labels so the reaper can find it. */
  runId: string;
  purpose: "candidate" | "verifier" | "acceptance" | "probe" | "bench";
  argv: string[];
  /** host directory whose content is copied into /workspace (tar stream). */
  workspaceDir: string;
  /** host directory copied to /control, not writable by the sandbox user. */
  controlDir?: string;
  /** only allowlisted names are passed; the daemon's own environment never is. */
  env?: Record<string, string>;
  timeoutMs: number;
  outputCapBytes?: number;
  signal?: AbortSignal;
}

/**
 * A limit a command ran into, each known from its own real signal: `time` the
 * deadline passed; `memory` the kernel OOM-killed a process of it; `pids` the
 * pids limit refused a fork or clone; `output` output beyond the cap was dropped.
 */
export const SandboxLimit = z.enum(["time", "memory", "pids", "output"]);
export type SandboxLimit = z.infer<typeof SandboxLimit>;

export interface SandboxResult {
  exit_code: number | null;
  timed_out: boolean;
  cancelled: boolean;
  oom_killed: boolean;
  truncated: boolean;
  /** every limit the command ran into, in this order; [] when none is known to have been reached */
  limits: SandboxLimit[];
  /** the signal that ended the command's own process (the test runner), e.g. "SIGKILL"; null when it exited or no status came back */
  signal: string | null;
  /** no status came back because the sandbox itself stopped under the command (never a pass) */
  sandbox_lost: boolean;
  stdout: string;
  stderr: string;
  duration_ms: number;
  image_digest: string | null;
  runtime: Runtime | "host";
}
