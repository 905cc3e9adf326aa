import type { Clock } from "../../client-lib/index.js";

/** What an eval subcommand touches: the client's IO, passed in so tests drive it directly. */
export interface EvalIO {
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** stderr is a terminal: live progress display instead of one line per case */
  stderrIsTTY: boolean;
  stdoutIsTTY: boolean;
  clock: Clock;
  out(s: string): void;
  err(s: string): void;
  /** registers a Ctrl-C handler (returns the unregister); absent: the process's SIGINT */
  onInterrupt?(handler: () => void): () => void;
}

/**
 * One subcommand: parses its own argv (global --socket/--state-dir/--json
 * included) and returns the process exit code. Usage errors exit 64 and change
 * nothing; errors carry a MiniAgentError code and never print a stack.
 */
export interface EvalCommand {
  main(argv: string[], io: EvalIO): Promise<number>;
}
