import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { main, type DaemonServices, type MainDeps } from "./main.js";
import type { RunService } from "./runtime/service.js";

/**
 * The daemon's lifecycle in-process: order of start-up steps, what a failure
 * at each does, and shutdown. The run service is a recorder; the socket,
 * lock, state dir and log file are real.
 */
let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "ma-main-"));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function harness(opts: { reapFails?: boolean; recoverFails?: boolean; env?: NodeJS.ProcessEnv } = {}) {
  const steps: string[] = [];
  const out: string[] = [];
  const err: string[] = [];
  let trigger: (s: string) => void = () => {};
  const logLines: string[] = [];
  const runService = {
    async recoverAtStartup() {
      steps.push("recover");
      if (opts.recoverFails) throw new Error("ledger is corrupt");
    },
    async shutdown() {
      steps.push("shutdown");
    },
    listRuns: () => [],
  } as unknown as RunService;
  const seen: { env?: NodeJS.ProcessEnv; readKey?: () => unknown } = {};
  const deps: MainDeps = {
    env: opts.env ?? {},
    cwd: dir,
    pid: process.pid,
    version: "test",
    out: (l) => out.push(l),
    err: (l) => err.push(l),
    async createServices(ctx) {
      steps.push("services");
      seen.env = ctx.env;
      seen.readKey = () => ctx.credentials.read();
      const services: DaemonServices = {
        runService,
        isolation: { runProbes: async () => ({}), latestReport: async () => null, health: async () => ({}) as never },
        liveGate: { check: async () => ({ ok: true }) },
        capture: { capture: () => Promise.reject(new Error("no capture in this test")) },
        async reapLeftovers() {
          steps.push("reap");
          if (opts.reapFails) throw new Error("engine unreachable");
          return 0;
        },
        async close() {
          steps.push("close");
        },
      };
      return services;
    },
    onShutdownSignal(handler) {
      trigger = handler;
      return () => {};
    },
    logDestination: new Writable({
      write(chunk, _e, cb) {
        logLines.push(String(chunk));
        cb();
      },
    }),
    onReady: () => steps.push("ready"),
  };
  return { deps, steps, out, err, stop: (s = "SIGTERM") => trigger(s), logLines, seen };
}

async function connects(socket: string): Promise<boolean> {
  return new Promise((resolve) => {
    const c = net.connect(socket);
    c.once("connect", () => (c.destroy(), resolve(true)));
    c.once("error", () => resolve(false));
  });
}

describe("daemon main()", () => {
  it("reaps, recovers, then listens; on SIGTERM shuts the run service down, closes, and exits 0", async () => {
    const h = harness();
    const state = path.join(dir, "state");
    const done = main(["--state-dir", state], h.deps);
    await new Promise<void>((resolve) => {
      const t = setInterval(() => h.steps.includes("ready") && (clearInterval(t), resolve()), 5);
    });
    expect(h.steps).toEqual(["services", "reap", "recover", "ready"]);
    expect(await connects(path.join(state, "daemon.sock"))).toBe(true);
    h.stop();
    expect(await done).toBe(0);
    expect(h.steps.slice(4)).toEqual(["shutdown", "close"]);
    expect(fs.existsSync(path.join(state, "daemon.sock"))).toBe(false);
    expect(fs.existsSync(path.join(state, "daemon.lock"))).toBe(false);
  });

  it("keeps starting when the engine cannot be reached for reaping (health reports it later)", async () => {
    const h = harness({ reapFails: true });
    const done = main(["--state-dir", path.join(dir, "s")], h.deps);
    await new Promise<void>((resolve) => {
      const t = setInterval(() => h.steps.includes("ready") && (clearInterval(t), resolve()), 5);
    });
    h.stop();
    expect(await done).toBe(0);
    expect(h.logLines.join("")).toContain("could not reap leftover sandboxes");
  });

  it("exits 1 without listening when recovery fails, and leaves no socket or lock", async () => {
    const h = harness({ recoverFails: true });
    const state = path.join(dir, "s");
    expect(await main(["--state-dir", state], h.deps)).toBe(1);
    expect(h.steps).not.toContain("ready");
    expect(h.err.join("")).toContain("start-up failed");
    expect(h.err.join("")).not.toContain("ledger is corrupt");
    expect(fs.existsSync(path.join(state, "daemon.lock"))).toBe(false);
    expect(fs.existsSync(path.join(state, "daemon.sock"))).toBe(false);
  });

  it("takes the key variables out of the environment it hands on, yet the credential source still reads them", async () => {
    const env: NodeJS.ProcessEnv = { MINI_AGENT_API_KEY: "k-123456", PATH: "/bin" };
    const h = harness({ env });
    const done = main(["--state-dir", path.join(dir, "s")], h.deps);
    await new Promise<void>((resolve) => {
      const t = setInterval(() => h.steps.includes("ready") && (clearInterval(t), resolve()), 5);
    });
    expect(h.seen.env).toEqual({ PATH: "/bin" });
    expect(env.MINI_AGENT_API_KEY).toBeUndefined();
    expect(h.seen.readKey?.()).toEqual({ value: "k-123456", origin: "env:MINI_AGENT_API_KEY" });
    h.stop();
    expect(await done).toBe(0);
  });

  it("a usage error is one line naming the flag (with the near one) and where the help is, exits 64, touching nothing; --help exits 0", async () => {
    const h = harness();
    expect(await main(["--state-dir", path.join(dir, "never"), "--log-levl", "debug"], h.deps)).toBe(64);
    // regression: Node's "Unknown option '--log-levl'. To specify a positional argument …" and 40 lines of help
    expect(h.err.join("")).toBe("mini-agent-daemon: unknown option --log-levl (did you mean --log-level?)\nrun `mini-agent-daemon --help` for more");
    expect(await main(["--help"], h.deps)).toBe(0);
    expect(fs.existsSync(path.join(dir, "never"))).toBe(false);
    expect(h.steps).toEqual([]);
  });
});
