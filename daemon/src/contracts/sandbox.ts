import * as z from "zod/mini";

// zod/mini, like contracts/run.ts: the run view the client parses names the backend.

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

export interface SandboxResult {
  exit_code: number | null;
  timed_out: boolean;
  cancelled: boolean;
  oom_killed: boolean;
  truncated: boolean;
  stdout: string;
  stderr: string;
  duration_ms: number;
  image_digest: string | null;
  runtime: Runtime | "host";
}
