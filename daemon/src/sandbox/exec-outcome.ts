/**
 * What one command in a sandbox is asked to do and what came back. Its own
 * module so that the container (sandbox-container.ts) and its command channel
 * (attach-channel.ts) both depend on it and not on each other.
 */

export interface ExecSpec {
  argv: string[];
  env: string[];
  timeoutMs: number;
  capBytes: number;
  signal?: AbortSignal;
  /** called once when the deadline passes or the signal aborts; must kill whatever runs. */
  onStop: (why: "timeout" | "cancel") => Promise<void>;
}

export interface ExecOutcome {
  exitCode: number | null;
  timedOut: boolean;
  cancelled: boolean;
  truncated: boolean;
  stdout: string;
  stderr: string;
  /** stdout as bytes, for a control exec whose output is data (sandbox/report-read.ts) */
  stdoutBytes?: Buffer;
  /**
   * No status came back from the spawner (it, or the whole container, is gone). Never a
   * pass; whether it is the command's result or a sandbox failure is the caller's call
   * (DockerExecutor.runFresh asks whether the sandbox still runs; a warm session fails).
   */
  spawnerLost: boolean;
}

/**
 * What the spawner's end marker reports besides the status (spawn-proto.h),
 * each read by the spawner from the kernel; null when no status came back, or
 * (the counts) when the sandbox cannot read its cgroup (gVisor has no cgroupfs).
 */
export interface CommandFacts {
  /** the signal that ended the command's own process (e.g. 9); null when it exited */
  signal: number | null;
  /** how often the sandbox's pids cgroup refused a fork or clone while the command ran */
  pidsLimitHits: number | null;
  /** how many processes the kernel OOM-killed in the sandbox's memory cgroup while the command ran */
  oomKills: number | null;
}

export const NO_FACTS: CommandFacts = { signal: null, pidsLimitHits: null, oomKills: null };

/** A command's outcome on the attach channel. */
export type CommandOutcome = ExecOutcome & CommandFacts;

/** A command's outcome with the memory verdict (kernel counter, else the engine's report). */
export type RunOutcome = CommandOutcome & { oomKilled: boolean };
