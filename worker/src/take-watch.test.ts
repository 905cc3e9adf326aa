import { describe, expect, it } from "vitest";
import { createTakeWatch, type Verdict } from "./take-watch.js";

function watch(verdict: () => Promise<Verdict>, clock = { now: 0 }) {
  const lines: string[] = [];
  let reads = 0;
  const w = createTakeWatch({
    verdict: async () => {
      reads++;
      return verdict();
    },
    now: () => clock.now,
    recheckMs: 1000,
    log: (l) => lines.push(l),
    commands: {
      probe: (f) => `node /opt/ma/dist/client/src/cli.js probe --family ${f} --state-dir /srv/w1`,
      buildImage: (f) => `npm run image:build -- --family ${f} --state-dir /srv/w1`,
    },
  });
  return { w, lines, reads: () => reads };
}

describe("take watch", () => {
  it("live: says once when it stops taking a family's live cases and once when it resumes, with the reason; re-reads health only after recheckMs", async () => {
    const clock = { now: 0 };
    let v: Verdict = { verdict: "stale", reason: "report_stale" };
    const { w, lines, reads } = watch(async () => v, clock);
    expect(await w.mayTake("node", "live")).toBe(false);
    expect(await w.mayTake("node", "live")).toBe(false);
    expect(reads()).toBe(1);
    clock.now += 1000;
    expect(await w.mayTake("node", "live")).toBe(false);
    v = { verdict: "passed", reason: null };
    clock.now += 1000;
    expect(await w.mayTake("node", "live")).toBe(true);
    clock.now += 1000;
    expect(await w.mayTake("node", "live")).toBe(true);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain("not taking live-model cases of node");
    expect(lines[0]).toContain("stale (report_stale)");
    // regression: the line named `mini-agent-client probe --family node`, without the worker's state dir and in a form not on the PATH
    expect(lines[0]).toContain("run: node /opt/ma/dist/client/src/cli.js probe --family node --state-dir /srv/w1");
    expect(lines[1]).toBe("taking live-model cases of node again: its isolation report passes");
  });

  it("replay: a family whose report is stale, failed or missing is still taken (a replay case needs no report), without a line", async () => {
    for (const v of [
      { verdict: "stale", reason: "report_stale" },
      { verdict: "failed", reason: "probe_failed:network_none" },
      { verdict: "none", reason: "report_stale" },
      { verdict: "passed", reason: null },
    ]) {
      const { w, lines } = watch(async () => v);
      expect(await w.mayTake("python", "replay")).toBe(true);
      expect(lines).toEqual([]);
    }
  });

  it("regression: a worker with no image of a family took its replay cases and ended them as image_missing errors; now they stay queued until the image is built", async () => {
    const clock = { now: 0 };
    let v: Verdict = { verdict: "none", reason: "image_missing" };
    const { w, lines } = watch(async () => v, clock);
    expect(await w.mayTake("go", "replay")).toBe(false);
    expect(await w.mayTake("go", "live")).toBe(false);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain("not taking cases of go");
    expect(lines[0]).toContain("npm run image:build -- --family go --state-dir /srv/w1");
    v = { verdict: "none", reason: "report_stale" };
    clock.now += 1000;
    expect(await w.mayTake("go", "replay")).toBe(true);
    expect(lines[2]).toBe("taking cases of go again: it can run here");
  });

  it("replay: an engine the daemon cannot reach takes nothing", async () => {
    const { w, lines } = watch(async () => ({ verdict: "unavailable", reason: "runtime_unavailable" }));
    expect(await w.mayTake("node", "replay")).toBe(false);
    expect(lines[0]).toContain("cannot run sandboxes now: unavailable (runtime_unavailable)");
  });

  it("a daemon that does not answer its health check is no proof: neither live nor replay cases", async () => {
    const { w, lines } = watch(async () => {
      throw new Error("connect ENOENT");
    });
    expect(await w.mayTake("python", "live")).toBe(false);
    expect(await w.mayTake("python", "replay")).toBe(false);
    expect(lines).toHaveLength(2);
    for (const l of lines) expect(l).toContain("did not answer its health check: connect ENOENT");
  });

  it("a family that passes from the start is taken without a line", async () => {
    const { w, lines } = watch(async () => ({ verdict: "passed", reason: null }));
    expect(await w.mayTake("go", "live")).toBe(true);
    expect(await w.mayTake("go", "replay")).toBe(true);
    expect(lines).toEqual([]);
  });
});
