/**
 * The process listeners present before the Agents SDK loads. The SDK's trace
 * provider adds its own SIGTERM, SIGINT, beforeExit and unhandledRejection
 * listeners when it is first made, and they call process.exit once the daemon's
 * own signal handler has finished its part: a SIGTERMed daemon then exited
 * before draining its sandbox pool, and an unhandled rejection anywhere would
 * end the daemon. The daemon owns its process: sdk.ts removes what the SDK added.
 * This module is imported before the SDK so its snapshot precedes the SDK's code.
 */
export const PROCESS_EVENTS = ["SIGTERM", "SIGINT", "beforeExit", "unhandledRejection"] as const;

type Listener = (...args: unknown[]) => void;
const listenersOf = (e: string): Listener[] => (process as NodeJS.EventEmitter).listeners(e) as Listener[];
const before = new Map(PROCESS_EVENTS.map((e) => [e, new Set(listenersOf(e))]));

/** Removes every listener of PROCESS_EVENTS added since this module loaded; returns how many. */
export function removeAddedProcessListeners(): number {
  let removed = 0;
  for (const e of PROCESS_EVENTS) {
    for (const l of listenersOf(e)) {
      if (before.get(e)?.has(l)) continue;
      (process as NodeJS.EventEmitter).removeListener(e, l);
      removed += 1;
    }
  }
  return removed;
}
