import type { RunView } from "../../daemon/src/contracts/run-view.js";
import { type ApiClient, EXIT, exitForStatus, type ExitCode, type Clock, shellQuote } from "../../client-lib/index.js";
import type { DiffStyle } from "./color.js";
import { activityText, nextActivity, StatusLine, type Activity } from "./progress.js";
import { eventLine, pendingActionText, progressLine, runEndLines, statusJson } from "./render.js";
import { whyLine } from "./why.js";

export interface FollowIO {
  out(s: string): void;
  /** stderr: the progress indicator goes here, so stdout stays what a script reads */
  err(s: string): void;
  /** stdin and stdout are a terminal: ask y/N */
  isTTY: boolean;
  /** stderr is a terminal: show the one-line progress indicator */
  progress: boolean;
  /** how diffs are shown on stdout */
  diffStyle: DiffStyle;
  clock: Clock;
  /** asks on the terminal; only called when isTTY */
  ask(question: string): Promise<string>;
}

export interface FollowOptions {
  json: boolean;
  /** extra flags to repeat in printed commands (e.g. --socket PATH) so they work when pasted */
  commandPrefix: string;
  /** this program as the user can run it again: printed commands start with it */
  program: string;
  /** false for `events --follow`: never prompt, just stop and report */
  interactive: boolean;
}

/** How long one events long-poll may wait; the daemon caps it too. */
export const POLL_WAIT_MS = 25_000;
/** how often the indicator's seconds move while a long-poll waits */
const REDRAW_MS = 100;

const MOVING = new Set(["running", "verifying"]);

/**
 * Follows a run through the events long-poll until it stops. On a terminal the
 * progress is one line on stderr, redrawn in place and erased before anything
 * else is printed; otherwise one plain line per event. At a pending write: on
 * a terminal ask y/N and continue; otherwise print the exact approve/reject
 * commands and return 3.
 */
export async function followRun(api: ApiClient, start: RunView, since: number, io: FollowIO, opts: FollowOptions): Promise<ExitCode> {
  const line = new StatusLine(io.err, io.progress && !opts.json && opts.interactive);
  let run = start;
  let activity: Activity | null = nextActivity(null, [], run, io.clock.now());
  const draw = () => line.show(activity ? activityText(activity, io.clock.now()) : progressLine(run));
  const stopTicking = io.clock.every(REDRAW_MS, () => {
    if (activity) draw();
  });
  try {
    return await follow();
  } finally {
    stopTicking();
    line.clear();
  }

  async function follow(): Promise<ExitCode> {
    let seq = since;
    // an action we already answered: wait for the daemon to move on instead of asking again
    let answered: string | null = null;
    for (;;) {
      const caughtUp = seq >= run.last_seq;
      const stillAnswered = run.status === "awaiting_approval" && run.pending_action?.action_id === answered && answered !== null;
      if (caughtUp && !MOVING.has(run.status) && !stillAnswered) {
        activity = null;
        line.clear();
        if (run.status !== "awaiting_approval") {
          if (opts.json) io.out(JSON.stringify(statusJson(run)) + "\n");
          else io.out(whyLine(run, opts.commandPrefix, opts.program) + "\n" + runEndLines(run));
          return exitForStatus(run.status);
        }
        const decided = await atApproval(api, run, io, opts);
        if (typeof decided === "number") return decided;
        answered = run.pending_action?.action_id ?? null;
        run = decided;
        continue;
      }
      const res = await api.events(run.run_id, seq, caughtUp ? POLL_WAIT_MS : 0);
      run = res.run;
      activity = nextActivity(activity, res.events, run, io.clock.now());
      // a terminal gets the indicator alone; a pipe or file gets every event, one line each
      const printEvents = !opts.json && !io.isTTY && res.events.length > 0;
      if (printEvents) line.clear();
      for (const e of res.events) {
        seq = Math.max(seq, e.seq);
        if (printEvents) io.out(eventLine(e) + "\n");
      }
      draw();
      // the daemon answered with nothing new although the run says there is more: re-read the view
      if (res.events.length === 0 && seq < run.last_seq) seq = Math.max(seq, run.last_seq);
    }
  }
}

async function atApproval(api: ApiClient, run: RunView, io: FollowIO, opts: FollowOptions): Promise<RunView | ExitCode> {
  const action = run.pending_action;
  if (opts.json) {
    io.out(JSON.stringify(statusJson(run)) + "\n");
    return EXIT.awaitingApproval;
  }
  io.out(pendingActionText(run, io.diffStyle));
  if (!action || !io.isTTY || !opts.interactive) {
    const id = action ? action.action_id : "ACTION";
    const pre = opts.commandPrefix ? `${opts.commandPrefix} ` : "";
    io.out(
      [
        `awaiting approval. To ${action?.command ? "run the command" : "apply the change"}:`,
        `  ${opts.program} approve ${pre}${shellQuote(run.run_id)} ${shellQuote(id)}`,
        "to refuse it:",
        `  ${opts.program} reject ${pre}${shellQuote(run.run_id)} ${shellQuote(id)} --reason 'why not'`,
        "",
      ].join("\n"),
    );
    return EXIT.awaitingApproval;
  }
  const question = action.command ? "Run this command in the sandbox? [y/N] " : `Apply this change to ${action.path}? [y/N] `;
  const answer = (await io.ask(question)).trim().toLowerCase();
  if (answer === "y" || answer === "yes") {
    return (await api.approve(run.run_id, action.action_id)).run;
  }
  const reason = (await io.ask("Reason (sent to the model; empty for 'rejected at the terminal'): ")).trim() || "rejected at the terminal";
  return (await api.reject(run.run_id, action.action_id, reason)).run;
}
