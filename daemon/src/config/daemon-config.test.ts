import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { isLoopbackHost, parseDaemonArgs } from "./daemon-config.js";
import { acquireInstanceLock, readLock } from "./instance-lock.js";
import { isMiniAgentError } from "../errors.js";

describe("daemon arguments", () => {
  it("defaults the socket into the resolved state dir", () => {
    const r = parseDaemonArgs([], { XDG_STATE_HOME: "/x" }, "/cwd");
    expect(r.kind === "run" && [r.config.stateDir, r.config.socketPath, r.config.tcp]).toEqual(["/x/mini-agent", "/x/mini-agent/daemon.sock", null]);
  });

  it.each([
    [["--bogus"]],
    [["stray"]],
    [["--tcp", "127.0.0.1:99999", "--token-file", "t"]],
    [["--tcp", "127.0.0.1:80"]],
    [["--token-file", "t"]],
    [["--log-level", "loud"]],
    [["--runtime", "kata"]],
    [["--force-non-loopback"]],
  ])("refuses %j as a usage error", (argv) => {
    expect(parseDaemonArgs(argv, {}, "/cwd").kind).toBe("usage_error");
  });

  it("resolves relative paths against the cwd and parses --tcp", () => {
    const r = parseDaemonArgs(["--state-dir", "s", "--tcp", "127.0.0.1:0", "--token-file", "tok"], {}, "/cwd");
    expect(r.kind === "run" && [r.config.stateDir, r.config.tokenFile, r.config.tcp]).toEqual(["/cwd/s", "/cwd/tok", { host: "127.0.0.1", port: 0 }]);
  });

  it("knows loopback from reachable addresses", () => {
    expect(["127.0.0.1", "127.1.2.3", "::1", "localhost"].map(isLoopbackHost)).toEqual([true, true, true, true]);
    expect(["0.0.0.0", "10.0.0.1", "::", "127.0.0.256"].map(isLoopbackHost)).toEqual([false, false, false, false]);
  });
});

describe("instance lock", () => {
  it("refuses a second daemon while the first pid lives, and takes over a dead one's lock", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ma-lock-"));
    const lockPath = path.join(dir, "daemon.lock");
    const alive = new Set([100]);
    const deps = { isAlive: (pid: number) => alive.has(pid), now: () => new Date(0) };
    const first = acquireInstanceLock(lockPath, "/s1", 100, deps);
    try {
      acquireInstanceLock(lockPath, "/s2", 200, deps);
      throw new Error("expected refusal");
    } catch (err) {
      expect(isMiniAgentError(err, "daemon_already_running")).toBe(true);
      expect((err as Error).message).toContain("pid 100");
      expect((err as Error).message).toContain("/s1");
    }
    alive.delete(100); // the first daemon was SIGKILLed
    const second = acquireInstanceLock(lockPath, "/s2", 200, deps);
    expect(readLock(lockPath)?.pid).toBe(200);
    first.release(); // a stale holder's release must not remove the new owner's lock
    expect(readLock(lockPath)?.pid).toBe(200);
    second.release();
    expect(fs.existsSync(lockPath)).toBe(false);
    expect(fs.readdirSync(dir)).toEqual([]);
    fs.rmSync(dir, { recursive: true });
  });
});
