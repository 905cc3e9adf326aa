import { describe, expect, it } from "vitest";
import { result } from "./report.testkit.js";
import { caseLine, createProgress, renderLive } from "./run-progress.js";

function handClock() {
  let t = 0;
  const ticks: Array<() => void> = [];
  return {
    clock: {
      now: () => t,
      every: (_ms: number, tick: () => void) => {
        ticks.push(tick);
        return () => void ticks.splice(ticks.indexOf(tick), 1);
      },
    },
    advance(ms: number) {
      t += ms;
      for (const f of [...ticks]) f();
    },
    timers: () => ticks.length,
  };
}

function sink(stderrIsTTY: boolean) {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    io: (clock: ReturnType<typeof handClock>["clock"]) => ({ clock, stderrIsTTY, out: (s: string) => out.push(s), err: (s: string) => err.push(s) }),
  };
}

/** ESC (a screen clear), an OSC window title ended by BEL, CR, a newline and U+202E (right-to-left override) */
const HOSTILE = "case\u001b[2J\u001b]0;pwned\u0007\rx\ny\u202eevil";
const RAW = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

describe("eval run progress", () => {
  it("regression: a case folder's name with terminal escapes, CR, newline or U+202E is printed escaped on one line (it was printed raw)", () => {
    const line = caseLine(result({ id: HOSTILE, verdict: "error", error: `daemon refused ${HOSTILE}` }), 1, 2);
    expect(line).not.toMatch(RAW);
    expect(line).toContain("case\\x1b[2J\\x1b]0;pwned\\x07\\x0dx\\x0ay\\u202eevil");
    for (const l of renderLive({ total: 2, skipped: 0, finished: [], workers: [{ id: HOSTILE, since: 0 }] }, 1000)) expect(l).not.toMatch(RAW);
    const c = handClock();
    const s = sink(true);
    const p = createProgress(s.io(c.clock), { json: false, total: 1, skipped: 0, workers: 1 });
    p.started(0, HOSTILE);
    p.finished(0, result({ id: HOSTILE }));
    p.close();
    // what reaches the terminal is only the block's own cursor moves, never the case's bytes
    expect(
      s.err
        .join("")
        .replace(/\u001b\[\d+F\u001b\[J/g, "")
        .replace(/\n/g, ""),
    ).not.toMatch(RAW);
  });

  it("one line per finished case without a terminal", () => {
    expect(caseLine(result({ id: "linkcheck-canonical", wall_ms: 41_234, tool_calls: 9 }), 3, 10)).toBe("[3/10] passed linkcheck-canonical 41.2s 9 calls");
    const failed = result({ verdict: "failed", rules: [{ rule: "max_tool_calls", expected: 5, observed: 8, passed: false }] });
    expect(caseLine(failed, 1, 2)).toContain("(max_tool_calls: expected 5, observed 8)");
  });

  it("live: done/total, passed so far, each worker's case with its seconds, and an ETA from the mean case time", () => {
    const s = {
      total: 5,
      skipped: 1,
      finished: [result({ wall_ms: 10_000 }), result({ verdict: "failed", wall_ms: 30_000 })],
      workers: [{ id: "c", since: 0 }, null],
    };
    expect(renderLive(s, 4_000)).toEqual(["eval: 3/5 done, 1 passed, 1 not passed, 1 skipped (done before), ETA 20s", "  [1] c 4.0s", "  [2] idle"]);
    expect(renderLive({ ...s, finished: [] }, 0)[0]).toContain("ETA …");
  });

  it("on a terminal the block is redrawn in place on stderr as the clock moves, and erased at the end; stdout stays empty", () => {
    const h = handClock();
    const s = sink(true);
    const p = createProgress(s.io(h.clock), { json: false, total: 2, skipped: 0, workers: 1 });
    p.started(0, "a");
    h.advance(1500);
    expect(s.err.at(-1)).toContain("  [1] a 1.5s");
    expect(s.err.some((x) => x.includes("\x1b[2F\x1b[J"))).toBe(true);
    p.finished(0, result({ id: "a" }));
    p.close();
    expect(h.timers()).toBe(0);
    expect(s.err.at(-1)).toBe("\x1b[2F\x1b[J");
    expect(s.out).toEqual([]);
  });

  it("--json: one JSON line per case on stdout and nothing drawn on stdout", () => {
    const h = handClock();
    const s = sink(false);
    const p = createProgress(s.io(h.clock), { json: true, total: 1, skipped: 0, workers: 1 });
    p.started(0, "a");
    p.finished(0, result({ id: "a" }));
    p.close();
    expect(s.out).toHaveLength(1);
    expect(JSON.parse(s.out[0]!)).toMatchObject({ kind: "case", done: 1, total: 1, result: { id: "a", verdict: "passed" } });
    expect(s.err).toEqual([]);
  });
});
