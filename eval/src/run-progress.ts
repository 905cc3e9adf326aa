import { termSafe, type Clock } from "../../client-lib/index.js";
import type { CaseResult } from "../../daemon/src/contracts/eval-report.js";

/**
 * What `eval run` shows while it works:
 *   terminal (stderr a TTY): a block redrawn in place on stderr: done/total,
 *     passed/failed so far, each worker's current case, ETA from the mean case time
 *   no terminal: one line per finished case on stdout
 *   --json: one JSON line per finished case on stdout, nothing else there
 * The rendering is pure (a state and a time in, text out) so tests drive it with a hand-moved clock.
 */
export interface ProgressState {
  total: number;
  /** cases skipped because a result exists: counted as done, not timed */
  skipped: number;
  finished: CaseResult[];
  /** per worker: the case it runs and since when (null: idle) */
  workers: Array<{ id: string; since: number } | null>;
}

export function caseLine(r: CaseResult, done: number, total: number): string {
  const extra = r.verdict === "error" && r.error !== null ? ` (${r.error.split("\n")[0]})` : r.verdict === "failed" ? ` (${failedRules(r)})` : "";
  // the case's name (a folder name) and its error text come from the case: one terminal-safe line
  return termSafe(`[${done}/${total}] ${r.verdict} ${r.id} ${(r.wall_ms / 1000).toFixed(1)}s ${r.tool_calls} calls${extra}`);
}

function failedRules(r: CaseResult): string {
  return r.rules
    .filter((x) => !x.passed)
    .map((x) => `${x.rule}: expected ${JSON.stringify(x.expected)}, observed ${JSON.stringify(x.observed)}`)
    .join("; ");
}

/** ETA: the mean time of the cases finished so far, times what is left, over the workers; null until one finished. */
export function etaMs(s: ProgressState): number | null {
  const timed = s.finished.filter((r) => r.verdict !== "error");
  if (timed.length === 0) return null;
  const mean = timed.reduce((a, r) => a + r.wall_ms, 0) / timed.length;
  const left = s.total - s.skipped - s.finished.length;
  return (mean * left) / Math.max(1, s.workers.length);
}

export function renderLive(s: ProgressState, now: number): string[] {
  const done = s.skipped + s.finished.length;
  const passed = s.finished.filter((r) => r.verdict === "passed").length;
  const notPassed = s.finished.length - passed;
  const eta = etaMs(s);
  const head = `eval: ${done}/${s.total} done, ${passed} passed, ${notPassed} not passed${s.skipped > 0 ? `, ${s.skipped} skipped (done before)` : ""}, ETA ${eta === null ? "…" : duration(eta)}`;
  return [head, ...s.workers.map((w, i) => `  [${i + 1}] ${w === null ? "idle" : `${termSafe(w.id)} ${((now - w.since) / 1000).toFixed(1)}s`}`)];
}

export function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
}

export interface Progress {
  started(worker: number, id: string): void;
  finished(worker: number, r: CaseResult): void;
  /** stops the redraw timer and erases the live block */
  close(): void;
}

export function createProgress(
  io: { clock: Clock; out(s: string): void; err(s: string): void; stderrIsTTY: boolean },
  opts: { json: boolean; total: number; skipped: number; workers: number },
): Progress {
  const state: ProgressState = { total: opts.total, skipped: opts.skipped, finished: [], workers: Array.from({ length: opts.workers }, () => null) };
  const live = io.stderrIsTTY;
  let drawn = 0;
  const erase = () => {
    // cursor up to the block's first line, then clear to the end of the screen
    if (drawn > 0) io.err(`\x1b[${drawn}F\x1b[J`);
    drawn = 0;
  };
  const draw = () => {
    erase();
    const lines = renderLive(state, io.clock.now());
    io.err(`${lines.join("\n")}\n`);
    drawn = lines.length;
  };
  const stop = live ? io.clock.every(500, draw) : () => {};
  if (live) draw();
  return {
    started(worker, id) {
      state.workers[worker] = { id, since: io.clock.now() };
      if (live) draw();
    },
    finished(worker, r) {
      state.workers[worker] = null;
      state.finished.push(r);
      const done = state.skipped + state.finished.length;
      if (opts.json) io.out(`${JSON.stringify({ kind: "case", done, total: state.total, result: r })}\n`);
      if (live) {
        erase();
        if (!opts.json) io.err(`${caseLine(r, done, state.total)}\n`);
        draw();
      } else if (!opts.json) io.out(`${caseLine(r, done, state.total)}\n`);
    },
    close() {
      stop();
      if (live) erase();
    },
  };
}
