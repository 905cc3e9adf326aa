import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RunStatus } from "../contracts/run.js";
import type { RunRow } from "../store/ledger.js";
import { collectGarbage, stateDirBytes } from "./gc.js";
import { createStateDirSize } from "./state-dir-size.js";

const DAY = 86_400_000;
let state: string;
const NOW = Date.parse("2026-12-03T12:00:00Z");

/** A run's files as the daemon leaves them, its trace last written `ageDays` ago. */
function run(id: string, status: RunStatus, ageDays: number): RunRow {
  const control = path.join(state, "control", id);
  fs.mkdirSync(path.join(control, "baseline", "files"), { recursive: true });
  fs.writeFileSync(path.join(control, "baseline", "files", "big.txt"), "x".repeat(10_000));
  fs.mkdirSync(path.join(state, "traces"), { recursive: true });
  const trace = path.join(state, "traces", `${id}.jsonl`);
  fs.writeFileSync(trace, "{}\n");
  const t = new Date(NOW - ageDays * DAY);
  fs.utimesSync(trace, t, t);
  fs.mkdirSync(path.join(state, "live-runs"), { recursive: true });
  fs.writeFileSync(path.join(state, "live-runs", `${id}.2026-01-01.00.json`), "{}");
  return { run_id: id, created_at: NOW - ageDays * DAY, status, reason: null, replay_cursor: 0, record: { control_dir: control } as never, state: {} as never };
}

beforeEach(() => {
  state = fs.mkdtempSync(path.join(os.tmpdir(), "gc-unit-"));
});
afterEach(() => fs.rmSync(state, { recursive: true, force: true }));

describe("gc: what finished runs left in the state dir", () => {
  it("removes old finished runs' files past the newest N, never a run that can still run or must be inspected, and says what it freed", async () => {
    const runs = [
      run("old-done", "completed", 30),
      run("old-failed", "failed", 40),
      run("old-paused", "budget_exhausted", 50),
      run("old-uncertain", "uncertain", 60),
      run("old-interrupted", "interrupted", 70),
      run("new-done", "completed", 1),
      run("keep-newest", "cancelled", 20),
    ];
    const deps = { stateDir: state, runs: () => runs, now: () => NOW };
    const dry = await collectGarbage(deps, { olderThanMs: 14 * DAY, keep: 1, dryRun: true });
    expect(dry.runs.map((r) => r.run_id).sort()).toEqual(["keep-newest", "old-done", "old-failed"]);
    // a dry run changes nothing
    expect(fs.existsSync(path.join(state, "control", "old-done"))).toBe(true);

    const r = await collectGarbage(deps, { olderThanMs: 14 * DAY, keep: 2, dryRun: false });
    expect(r.runs.map((x) => x.run_id).sort()).toEqual(["old-done", "old-failed"]);
    expect(r.kept_finished).toBe(2);
    expect(r.kept_open).toBe(3);
    expect(r.bytes_freed).toBeGreaterThan(20_000);
    for (const id of ["old-done", "old-failed"]) {
      expect(fs.existsSync(path.join(state, "control", id))).toBe(false);
      expect(fs.existsSync(path.join(state, "traces", `${id}.jsonl`))).toBe(false);
      expect(fs.readdirSync(path.join(state, "live-runs")).some((n) => n.startsWith(`${id}.`))).toBe(false);
    }
    for (const id of ["old-paused", "old-uncertain", "old-interrupted", "new-done", "keep-newest"]) {
      expect(fs.existsSync(path.join(state, "control", id, "baseline", "files", "big.txt"))).toBe(true);
    }
  });

  it("never removes a control dir a record names outside the state dir's control folder", async () => {
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), "gc-outside-"));
    try {
      const r0 = run("forged", "completed", 30);
      const forged = { ...r0, record: { control_dir: outside } as never };
      await collectGarbage({ stateDir: state, runs: () => [forged], now: () => NOW }, { olderThanMs: DAY, keep: 0, dryRun: false });
      expect(fs.existsSync(outside)).toBe(true);
      expect(fs.existsSync(path.join(state, "traces", "forged.jsonl"))).toBe(false);
    } finally {
      fs.rmSync(outside, { recursive: true, force: true });
    }
  });

  it("drops cached baseline results not used within the window, keeps recent ones", async () => {
    const cache = path.join(state, "baseline-tests");
    fs.mkdirSync(cache);
    const old = path.join(cache, `${"a".repeat(64)}.json`);
    const fresh = path.join(cache, `${"b".repeat(64)}.json`);
    fs.writeFileSync(old, "{}");
    fs.writeFileSync(fresh, "{}");
    const t = new Date(NOW - 30 * DAY);
    fs.utimesSync(old, t, t);
    const r = await collectGarbage({ stateDir: state, runs: () => [], now: () => NOW }, { olderThanMs: 14 * DAY, keep: 0, dryRun: false });
    expect(r.baseline_results).toBe(1);
    expect(fs.existsSync(old)).toBe(false);
    expect(fs.existsSync(fresh)).toBe(true);
  });
});

describe("the state dir's size in health", () => {
  it("regression: health walked the whole state dir on every call; a figure is kept for maxAgeMs, then refreshed by one walk in the background, and gc's invalidate makes the next call measure", async () => {
    let t = 0;
    let walks = 0;
    const size = createStateDirSize({
      stateDir: state,
      now: () => t,
      maxAgeMs: 30_000,
      measure: (dir) => (walks++, stateDirBytes(dir)),
    });
    fs.writeFileSync(path.join(state, "a"), "x".repeat(1000));
    expect(await size.bytes()).toBe(1000);
    fs.writeFileSync(path.join(state, "b"), "x".repeat(500));
    // within the window: the kept figure, no walk
    t = 29_999;
    expect(await Promise.all([size.bytes(), size.bytes(), size.bytes()])).toEqual([1000, 1000, 1000]);
    expect(walks).toBe(1);
    // past it: answered at once with the kept figure while a single walk refreshes it
    t = 30_000;
    expect(await Promise.all([size.bytes(), size.bytes()])).toEqual([1000, 1000]);
    await new Promise((r) => setTimeout(r, 50));
    expect(walks).toBe(2);
    expect(await size.bytes()).toBe(1500);
    // what gc removed is not shown afterwards
    fs.rmSync(path.join(state, "a"));
    size.invalidate();
    expect(await size.bytes()).toBe(500);
    expect(walks).toBe(3);
  });

  it("gc counts a run's folder with the daemon's one tree walk: regular files by their length, a symlink's target never", async () => {
    const r = run("old-done", "completed", 30);
    fs.symlinkSync("/usr", path.join(r.record.control_dir, "usr-link"));
    const out = await collectGarbage({ stateDir: state, runs: () => [r], now: () => NOW }, { olderThanMs: DAY, keep: 0, dryRun: true });
    // big.txt 10,000 + trace "{}\n" 3 + live record "{}" 2
    expect(out.runs).toEqual([{ run_id: "old-done", status: "completed", bytes: 10_005 }]);
  });
});
