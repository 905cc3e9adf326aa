/** The signals a long-running program (mini-agent-daemon, mini-agent-worker) stops on, cleanly. */
export const SHUTDOWN_SIGNALS = ["SIGTERM", "SIGINT"] as const;

/** The part of a process signal handlers are installed on (the real `process` in a bin's cli.ts). */
export interface SignalSource {
  on(signal: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void): unknown;
  off(signal: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void): unknown;
}

/**
 * `onShutdownSignal` for a program's main(): calls `handler` on SIGTERM or SIGINT
 * and answers the function that removes it again. One home, so the daemon and
 * the worker stop on the same signals.
 */
export function shutdownSignalsOf(source: SignalSource): (handler: (signal: string) => void) => () => void {
  return (handler) => {
    const onSignal = (s: NodeJS.Signals) => handler(s);
    for (const s of SHUTDOWN_SIGNALS) source.on(s, onSignal);
    return () => {
      for (const s of SHUTDOWN_SIGNALS) source.off(s, onSignal);
    };
  };
}
