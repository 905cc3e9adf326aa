import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { binArgs, cleanEnv, rawRequest, REPO, Started } from "./harness.js";

/**
 * Issue 10 item 7: a restart right after SIGKILL exited 75, because the
 * instance lock took the killed daemon's pid, still present as an unreaped
 * zombie, for a live daemon. Here the daemon's parent is a shell that execs
 * `sleep` and never reaps, so every killed daemon stays a zombie while the next
 * one starts: exactly what a supervisor that is slow to wait() leaves behind.
 */
const started = new Started();
const parents: ChildProcess[] = [];
afterEach(() => {
  // the parents' sleep ends; their zombies go to init, which reaps them
  for (const p of parents.splice(0)) p.kill("SIGKILL");
  started.removeDirs();
});

/** "R", "S", "Z", ... from /proc/PID/stat, or null once the pid is gone */
function procState(pid: number): string | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
  } catch {
    return null;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Starts the daemon under a parent that never reaps it; resolves once it is ready, or rejects with its exit. */
async function startUnreaped(stateDir: string): Promise<{ pid: number; socket: string }> {
  // "$@" is node's arguments for the daemon, then --state-dir DIR
  const script = `"$0" "$@" & echo "spawned $!"; exec sleep 900`;
  const parent = spawn("sh", ["-c", script, process.execPath, ...binArgs("daemon"), "--state-dir", stateDir], {
    cwd: REPO,
    env: cleanEnv(),
    stdio: ["ignore", "pipe", "pipe"],
  });
  parents.push(parent);
  let out = "";
  let err = "";
  parent.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  parent.stderr!.on("data", (d: Buffer) => (err += d.toString()));
  const deadline = Date.now() + 120_000;
  for (;;) {
    const spawned = /spawned (\d+)/.exec(out);
    const ready = /mini-agent-daemon ready pid=(\d+) socket=(\S+)/.exec(out);
    if (ready) return { pid: Number(ready[1]), socket: ready[2]! };
    const state = spawned ? procState(Number(spawned[1])) : "starting";
    if (state === null || state === "Z") throw new Error(`the daemon exited before it was ready:\n${out}\n${err}`);
    if (Date.now() > deadline) throw new Error(`the daemon was not ready in time:\n${out}\n${err}`);
    await sleep(25);
  }
}

describe("mini-agent-daemon restarted right after SIGKILL", () => {
  it("starts 20 times in a row while each killed daemon is still an unreaped zombie (regression: exit 75 'already runs')", { timeout: 900_000 }, async () => {
    const stateDir = started.dir("ma-e2e-restart-");
    let current = await startUnreaped(stateDir);
    for (let i = 0; i < 20; i++) {
      process.kill(current.pid, "SIGKILL");
      // dead but not reaped: the state the old lock mistook for a live daemon
      for (let t = 0; procState(current.pid) !== "Z"; t++) {
        if (t > 400) throw new Error(`pid ${current.pid} did not become a zombie (state ${procState(current.pid)})`);
        await sleep(5);
      }
      const next = await startUnreaped(stateDir);
      expect(procState(current.pid)).toBe("Z");
      const health = await rawRequest(next.socket, "GET", "/v1/health");
      expect(health.status).toBe(200);
      expect((health.json as { daemon: { pid: number } }).daemon.pid).toBe(next.pid);
      current = next;
    }
    process.kill(current.pid, "SIGTERM");
    for (let t = 0; procState(current.pid) !== "Z" && procState(current.pid) !== null; t++) {
      if (t > 2000) throw new Error("the last daemon did not stop on SIGTERM");
      await sleep(10);
    }
    expect(fs.existsSync(path.join(stateDir, "daemon.lock"))).toBe(false);
  });
});
