import type { ImageFamily } from "../contracts/test-report.js";

/**
 * Whether this worker takes live-model cases of a family now: only while its
 * daemon's health says that family's isolation report on THIS machine is
 * fresh and passing (the live gate's own verdict). Otherwise the live cases
 * stay queued for a worker whose report passes; replay cases are not
 * affected. Asked before each fetch from a live queue, answered from a
 * health read at most `recheckMs` old, so a report that goes stale (or is
 * refreshed by `mini-agent-client probe`) is noticed within that time. Says
 * once when it stops and once when it resumes, with the reason.
 */
export interface Verdict {
  verdict: string;
  reason: string | null;
}

export interface LiveWatchDeps {
  verdict(family: ImageFamily): Promise<Verdict>;
  now(): number;
  recheckMs: number;
  log(line: string): void;
}

export function createLiveWatch(deps: LiveWatchDeps): { mayTakeLive(family: ImageFamily): Promise<boolean> } {
  const seen = new Map<ImageFamily, { passing: boolean; at: number }>();
  return {
    async mayTakeLive(family) {
      const last = seen.get(family);
      if (last !== undefined && deps.now() - last.at < deps.recheckMs) return last.passing;
      let v: Verdict;
      try {
        v = await deps.verdict(family);
      } catch (err) {
        // its own daemon did not answer: no proof, so no live case
        v = { verdict: "unknown", reason: `the worker's daemon did not answer its health check: ${(err as Error)?.message ?? String(err)}` };
      }
      const passing = v.verdict === "passed";
      if (last === undefined ? !passing : last.passing !== passing)
        deps.log(
          passing
            ? `taking live-model cases of ${family} again: its isolation report passes`
            : `not taking live-model cases of ${family} (they stay queued for a worker whose report passes): its isolation report on this machine is ${v.verdict}${v.reason ? ` (${v.reason})` : ""}; run \`mini-agent-client probe --family ${family}\` against this worker's state dir`,
        );
      seen.set(family, { passing, at: deps.now() });
      return passing;
    },
  };
}
