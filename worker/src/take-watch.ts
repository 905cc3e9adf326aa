import type { ImageFamily } from "../../daemon/src/contracts/test-report.js";

/**
 * Which queues of a family this worker fetches from now, decided from its own
 * daemon's health (`families[family]`: the live gate's verdict and reason for
 * that family on THIS machine), read at most `recheckMs` before a fetch:
 *
 * - a live-model case only while that verdict is `passed` (a fresh, passing
 *   isolation report for the current image and HostConfig);
 * - a replay case only while the family can run here at all: its image is
 *   pinned in this worker's state dir (reason `image_missing` otherwise) and
 *   the engine answers (verdict `unavailable` otherwise). Taking it anyway
 *   would end it as an error here although another worker could run it.
 *
 * What is not taken stays queued for a worker that can. Each rule says once
 * on the worker's stderr when it stops taking a family's cases, with why and
 * what to run, and once when it takes them again. A daemon that does not
 * answer is no proof of anything: neither is taken.
 */
export interface Verdict {
  verdict: string;
  reason: string | null;
}

export interface TakeWatchDeps {
  verdict(family: ImageFamily): Promise<Verdict>;
  now(): number;
  recheckMs: number;
  log(line: string): void;
  /** the commands to print, as they run from this user's shell against this worker's own state dir */
  commands: { probe(family: ImageFamily): string; buildImage(family: ImageFamily): string };
}

type Model = "replay" | "live";

const UNANSWERED = "unanswered";

export function createTakeWatch(deps: TakeWatchDeps): { mayTake(family: ImageFamily, model: Model): Promise<boolean> } {
  const read = new Map<ImageFamily, { v: Verdict; at: number }>();
  const said = new Map<string, boolean>();

  async function verdictOf(family: ImageFamily): Promise<Verdict> {
    const last = read.get(family);
    if (last !== undefined && deps.now() - last.at < deps.recheckMs) return last.v;
    let v: Verdict;
    try {
      v = await deps.verdict(family);
    } catch (err) {
      v = { verdict: UNANSWERED, reason: `the worker's daemon did not answer its health check: ${(err as Error)?.message ?? String(err)}` };
    }
    read.set(family, { v, at: deps.now() });
    return v;
  }

  /** logs a change of `ok` for (family, model); the first answer is logged only when it is a refusal */
  function note(family: ImageFamily, model: Model, ok: boolean, why: () => string): void {
    const key = `${family}/${model}`;
    const before = said.get(key);
    said.set(key, ok);
    if (before === ok || (before === undefined && ok)) return;
    const what = model === "live" ? `live-model cases of ${family}` : `cases of ${family}`;
    deps.log(
      ok
        ? `taking ${what} again: ${model === "live" ? "its isolation report passes" : "it can run here"}`
        : `not taking ${what} (they stay queued for a worker that can run them): ${why()}`,
    );
  }

  return {
    async mayTake(family, model) {
      const v = await verdictOf(family);
      const detail = `${v.verdict}${v.reason ? ` (${v.reason})` : ""}`;
      if (model === "live") {
        const ok = v.verdict === "passed";
        note(family, model, ok, () =>
          v.verdict === UNANSWERED ? (v.reason ?? "") : `its isolation report on this machine is ${detail}; run: ${deps.commands.probe(family)}`,
        );
        return ok;
      }
      const ok = v.verdict !== UNANSWERED && v.verdict !== "unavailable" && v.reason !== "image_missing";
      note(family, model, ok, () =>
        v.verdict === UNANSWERED
          ? (v.reason ?? "")
          : v.reason === "image_missing"
            ? `no ${family} sandbox image is pinned in this worker's state dir; build one: ${deps.commands.buildImage(family)}`
            : `its daemon cannot run sandboxes now: ${detail}`,
      );
      return ok;
    },
  };
}
