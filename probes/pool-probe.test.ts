import tarStream from "tar-stream";
import { describe, expect, it } from "vitest";
import type { SandboxContainer } from "../daemon/src/sandbox/sandbox-container.js";
import { observeHandOver } from "./pool-probe.js";

/**
 * The hand-over read of a sandbox. The engine is replaced by a scripted `docker top`
 * because the moment it stands for (the init has forked the spawner but not yet
 * exec'd it) lasts microseconds on an idle host and cannot be produced on demand.
 */
const INIT = "/sbin/docker-init -- /opt/mini-agent/spawner";
const SPAWNER = "/opt/mini-agent/spawner";

function boxWithTops(tops: string[][]): { box: SandboxContainer; topCalls: () => number } {
  let calls = 0;
  const container = {
    async top() {
      const list = tops[Math.min(calls++, tops.length - 1)]!;
      return { Titles: ["PID", "COMMAND"], Processes: list.map((cmd, i) => [String(100 + i), cmd]) };
    },
    async getArchive() {
      const pack = tarStream.pack();
      pack.entry({ name: "workspace", type: "directory" });
      pack.finalize();
      return pack;
    },
  };
  // no /proc root to read (Pid 0): /tmp is then reported as not visible, which is not what is tested here
  const box = { container, inspect: async () => ({ HostConfig: { Runtime: "runc" }, State: { Pid: 0 }, Config: { Labels: {} } }) };
  return { box: box as unknown as SandboxContainer, topCalls: () => calls };
}

describe("observeHandOver", () => {
  it("regression: a fresh sandbox caught between its init's fork and the spawner's exec (two docker-init lines) is read again until the spawner shows", async () => {
    const { box } = boxWithTops([[INIT], [INIT, INIT], [INIT, SPAWNER]]);
    const seen = await observeHandOver(box, false);
    expect(seen.processes).toEqual([SPAWNER, INIT].sort());
    expect(seen.workspace).toEqual([]);
  });

  it("a sandbox whose spawner shows is read at once, extra processes and all (never waited on until they go)", async () => {
    const { box, topCalls } = boxWithTops([
      [INIT, SPAWNER, "sleep 1000"],
      [INIT, SPAWNER],
    ]);
    const seen = await observeHandOver(box, true);
    expect(seen.processes).toEqual([INIT, SPAWNER, "sleep 1000"].sort());
    expect(topCalls()).toBe(1);
  });
});
