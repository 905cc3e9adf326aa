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

  it("--policy FILE is resolved against the cwd and must exist; without it the state dir's policy.json may be missing", () => {
    const named = parseDaemonArgs(["--policy", "p/policy.json"], { XDG_STATE_HOME: "/x" }, "/cwd");
    expect(named.kind === "run" && named.config.policy).toEqual({ file: "/cwd/p/policy.json", named: true });
    const byDefault = parseDaemonArgs([], { XDG_STATE_HOME: "/x" }, "/cwd");
    expect(byDefault.kind === "run" && byDefault.config.policy).toEqual({ file: "/x/mini-agent/policy.json", named: false });
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
    [["--control-max-bytes", "0"]],
    [["--control-max-bytes", "1e6"]],
    [["--control-max-files", "-5"]],
    [["--control-max-files", "many"]],
    [["--sandbox-pool", "-1"]],
    [["--sandbox-pool", "9"]],
    [["--sandbox-pool", "1.5"]],
    [["--sandbox-pool", "01"]],
  ])("refuses %j as a usage error", (argv) => {
    expect(parseDaemonArgs(argv, {}, "/cwd").kind).toBe("usage_error");
  });

  it("--sandbox-pool N sets the pool size (0 disables it); without it the default of 1", () => {
    const of = (argv: string[]) => {
      const r = parseDaemonArgs(argv, {}, "/cwd");
      return r.kind === "run" ? r.config.sandboxPool : r.kind;
    };
    expect([of([]), of(["--sandbox-pool", "0"]), of(["--sandbox-pool", "3"])]).toEqual([1, 0, 3]);
  });

  it("takes the control folder limits from flags, else the defaults (64 MiB, 10,000 files and folders)", () => {
    const plain = parseDaemonArgs([], {}, "/cwd");
    expect(plain.kind === "run" && plain.config.controlLimits).toEqual({ maxBytes: 64 * 1024 * 1024, maxFiles: 10_000 });
    const set = parseDaemonArgs(["--control-max-bytes", "1048576", "--control-max-files", "20"], {}, "/cwd");
    expect(set.kind === "run" && set.config.controlLimits).toEqual({ maxBytes: 1048576, maxFiles: 20 });
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
  it("refuses a second daemon while the first holds the lock, naming its pid and socket, and is free again once released", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ma-lock-"));
    const lockPath = path.join(dir, "daemon.lock");
    const deps = { now: () => new Date(0) };
    const first = await acquireInstanceLock(lockPath, "/s1", 100, deps);
    // another path to the same state dir is the same lock
    const alias = path.join(dir, "alias");
    fs.symlinkSync(dir, alias);
    for (const p of [lockPath, path.join(alias, "daemon.lock")]) {
      const err = await acquireInstanceLock(p, "/s2", 200, deps).then(
        () => null,
        (e: unknown) => e,
      );
      expect(isMiniAgentError(err, "daemon_already_running")).toBe(true);
      expect((err as Error).message).toContain("pid 100");
      expect((err as Error).message).toContain("/s1");
    }
    expect(readLock(lockPath)?.pid).toBe(100);
    first.release();
    expect(fs.existsSync(lockPath)).toBe(false);
    const second = await acquireInstanceLock(lockPath, "/s2", 200, deps);
    expect(readLock(lockPath)?.pid).toBe(200);
    first.release(); // a second release of an old holder must not remove the new owner's record
    expect(readLock(lockPath)?.pid).toBe(200);
    second.release();
    expect(fs.readdirSync(dir)).toEqual(["alias"]);
    fs.rmSync(dir, { recursive: true });
  });

  it("takes over a lock file whose pid is alive but holds no lock (regression: a zombie's pid made a restart exit 75)", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ma-lock-"));
    const lockPath = path.join(dir, "daemon.lock");
    // a live pid that is not a daemon on this state dir: what an unreaped, SIGKILLed daemon looks like to kill(pid, 0)
    fs.writeFileSync(lockPath, JSON.stringify({ pid: process.pid, socket: "/old.sock", started_at: "1970-01-01T00:00:00.000Z" }) + "\n");
    const lock = await acquireInstanceLock(lockPath, "/new.sock", 300);
    expect(readLock(lockPath)).toMatchObject({ pid: 300, socket: "/new.sock" });
    lock.release();
    expect(fs.readdirSync(dir)).toEqual([]);
    fs.rmSync(dir, { recursive: true });
  });
});
