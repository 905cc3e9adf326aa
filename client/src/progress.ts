import type { RunView, TraceEvent } from "../../daemon/src/contracts/run-view.js";

/**
 * The one-line progress indicator on a terminal (issue 10 item 18): while the
 * candidate tests or the Verifier run, "running tests in the sandbox… 1.4 s",
 * redrawn in place on stderr and erased when done; never on a non-terminal.
 * What is running is read from the run's events; the seconds are counted from
 * when the client saw it start (events carry no time of their own).
 */

export interface Activity {
  label: string;
  since: number;
  /** the run_tests call it belongs to; null for the Verifier */
  callId: string | null;
}

/** What the run is busy with after these events (null: nothing worth a timer). */
export function nextActivity(current: Activity | null, events: readonly TraceEvent[], run: Pick<RunView, "status" | "backend">, now: number): Activity | null {
  let a = current;
  for (const e of events) {
    if (e.type === "tool_proposed" && e.payload.name === "run_tests") {
      const where = run.backend === "container" ? "in the sandbox" : "on the host";
      a = { label: `running tests ${where}`, since: now, callId: e.call_id };
    } else if (e.type === "tool_observed" && a !== null && a.callId !== null && a.callId === e.call_id) a = null;
    else if (e.type === "verification_started") a = { label: "verifying", since: now, callId: null };
    else if (e.type === "verification_passed" || e.type === "verification_failed" || e.type === "run_stopped" || e.type === "approval_requested") a = null;
  }
  // followed from the middle of a verification: its start event was before `since`
  if (a === null && run.status === "verifying") a = { label: "verifying", since: now, callId: null };
  if (run.status !== "running" && run.status !== "verifying") a = null;
  return a;
}

export function activityText(a: Activity, now: number): string {
  return `${a.label}… ${(Math.max(0, now - a.since) / 1000).toFixed(1)} s`;
}

/** One line redrawn in place (`\r`, erase line); a no-op unless the stream is a terminal. */
export class StatusLine {
  private shown = false;

  constructor(
    private readonly write: (s: string) => void,
    private readonly enabled: boolean,
  ) {}

  show(text: string): void {
    if (!this.enabled) return;
    this.write(`\r\x1b[2K${text}`);
    this.shown = true;
  }

  clear(): void {
    if (this.shown) this.write("\r\x1b[2K");
    this.shown = false;
  }
}
