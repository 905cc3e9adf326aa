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
  /**
   * No status came back from the spawner (it, or the whole container, is gone). Never a
   * pass; whether it is the command's result or a sandbox failure is the caller's call
   * (DockerExecutor.runFresh asks whether the sandbox still runs; a warm session fails).
   */
  spawnerLost: boolean;
}
