import type { z } from "zod";
import type { RunViewSchema } from "../../daemon/src/contracts/api.js";
import type { ApiClient } from "./api-client.js";
import { EXIT, exitForStatus, type ExitCode } from "./exit-codes.js";
import { eventLine, finalText, pendingActionText, progressLine, shellQuote, statusJson } from "./render.js";

type RunView = z.infer<typeof RunViewSchema>;

export interface FollowIO {
  out(s: string): void;
  isTTY: boolean;
  /** asks on the terminal; only called when isTTY */
  ask(question: string): Promise<string>;
}

export interface FollowOptions {
  json: boolean;
  /** extra flags to repeat in printed commands (e.g. --socket PATH) so they work when pasted */
  commandPrefix: string;
  /** false for `events --follow`: never prompt, just stop and report */
  interactive: boolean;
}

/** How long one events long-poll may wait; the daemon caps it too. */
export const POLL_WAIT_MS = 25_000;

const MOVING = new Set(["running", "verifying"]);

/**
 * Follows a run through the events long-poll until it stops. On a terminal the
 * progress is one updating line; otherwise one plain line per event. At a
 * pending write: on a terminal ask y/N and continue; otherwise print the exact
 * approve/reject commands and return 3.
 */
export async function followRun(api: ApiClient, start: RunView, since: number, io: FollowIO, opts: FollowOptions): Promise<ExitCode> {
  const tty = io.isTTY && !opts.json;
  let run = start;
  let seq = since;
  let lineShown = false;
  // an action we already answered: wait for the daemon to move on instead of asking again
  let answered: string | null = null;
  const clearLine = () => {
    if (tty && lineShown) io.out("\r\x1b[2K");
    lineShown = false;
  };
  for (;;) {
    const caughtUp = seq >= run.last_seq;
    const stillAnswered = run.status === "awaiting_approval" && run.pending_action?.action_id === answered && answered !== null;
    if (caughtUp && !MOVING.has(run.status) && !stillAnswered) {
      clearLine();
      if (run.status !== "awaiting_approval") {
        if (opts.json) io.out(JSON.stringify(statusJson(run)) + "\n");
        else io.out(finalText(run) + "\n");
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
    for (const e of res.events) {
      seq = Math.max(seq, e.seq);
      if (!opts.json && !tty) io.out(eventLine(e) + "\n");
    }
    if (tty) {
      io.out("\r\x1b[2K" + progressLine(run));
      lineShown = true;
    }
    // the daemon answered with nothing new although the run says there is more: re-read the view
    if (res.events.length === 0 && seq < run.last_seq) seq = Math.max(seq, run.last_seq);
  }
}

async function atApproval(api: ApiClient, run: RunView, io: FollowIO, opts: FollowOptions): Promise<RunView | ExitCode> {
  const action = run.pending_action;
  if (opts.json) {
    io.out(JSON.stringify(statusJson(run)) + "\n");
    return EXIT.awaitingApproval;
  }
  io.out(pendingActionText(run));
  if (!action || !io.isTTY || !opts.interactive) {
    const id = action ? action.action_id : "ACTION";
    const pre = opts.commandPrefix ? `${opts.commandPrefix} ` : "";
    io.out(
      [
        "awaiting approval. To apply the change:",
        `  mini-agent-client approve ${pre}${shellQuote(run.run_id)} ${shellQuote(id)}`,
        "to refuse it:",
        `  mini-agent-client reject ${pre}${shellQuote(run.run_id)} ${shellQuote(id)} --reason 'why not'`,
        "",
      ].join("\n"),
    );
    return EXIT.awaitingApproval;
  }
  const answer = (await io.ask(`Apply this change to ${action.path}? [y/N] `)).trim().toLowerCase();
  if (answer === "y" || answer === "yes") {
    return (await api.approve(run.run_id, action.action_id)).run;
  }
  const reason = (await io.ask("Reason (sent to the model; empty for 'rejected at the terminal'): ")).trim() || "rejected at the terminal";
  return (await api.reject(run.run_id, action.action_id, reason)).run;
}
