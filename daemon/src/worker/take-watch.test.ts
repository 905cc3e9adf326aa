import { describe, expect, it } from "vitest";
import { createLiveWatch, type Verdict } from "./live-watch.js";

describe("live watch", () => {
  it("says once when it stops taking live cases of a family and once when it resumes, with the reason; re-reads health only after recheckMs", async () => {
    let now = 0;
    let v: Verdict = { verdict: "stale", reason: "report_stale" };
    let reads = 0;
    const lines: string[] = [];
    const w = createLiveWatch({
      verdict: async () => {
        reads++;
        return v;
      },
      now: () => now,
      recheckMs: 1000,
      log: (l) => lines.push(l),
    });
    expect(await w.mayTakeLive("node")).toBe(false);
    expect(await w.mayTakeLive("node")).toBe(false);
    expect(reads).toBe(1);
    now += 1000;
    expect(await w.mayTakeLive("node")).toBe(false);
    v = { verdict: "passed", reason: null };
    now += 1000;
    expect(await w.mayTakeLive("node")).toBe(true);
    now += 1000;
    expect(await w.mayTakeLive("node")).toBe(true);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain("not taking live-model cases of node");
    expect(lines[0]).toContain("stale (report_stale)");
    expect(lines[0]).toContain("mini-agent-client probe --family node");
    expect(lines[1]).toBe("taking live-model cases of node again: its isolation report passes");
  });

  it("a daemon that does not answer its health check is no proof: no live case", async () => {
    const lines: string[] = [];
    const w = createLiveWatch({
      verdict: async () => {
        throw new Error("connect ENOENT");
      },
      now: () => 0,
      recheckMs: 1000,
      log: (l) => lines.push(l),
    });
    expect(await w.mayTakeLive("python")).toBe(false);
    expect(lines[0]).toContain("did not answer its health check");
  });

  it("a family that passes from the start is taken without a line", async () => {
    const lines: string[] = [];
    const w = createLiveWatch({ verdict: async () => ({ verdict: "passed", reason: null }), now: () => 0, recheckMs: 1000, log: (l) => lines.push(l) });
    expect(await w.mayTakeLive("go")).toBe(true);
    expect(lines).toEqual([]);
  });
});
