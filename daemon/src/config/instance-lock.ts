import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { MiniAgentError } from "../errors.js";

/**
 * One daemon per state dir. The lock file holds the owner's pid and socket so a
 * second start can say which daemon already runs. A lock left by a dead pid
 * (crash, SIGKILL) is taken over rather than blocking the user forever.
 */
export const LockRecord = z.strictObject({
  pid: z.int().positive(),
  socket: z.string(),
  started_at: z.string(),
});
export type LockRecord = z.infer<typeof LockRecord>;

export interface InstanceLock {
  readonly path: string;
  release(): void;
}

export interface LockDeps {
  /** true when a process with this pid exists (default: signal 0) */
  isAlive(pid: number): boolean;
  now(): Date;
}

export const defaultLockDeps: LockDeps = {
  isAlive(pid) {
    try {
      process.kill(pid, 0);
      return true;
    } catch (err) {
      // EPERM: it exists but belongs to someone else, so it is alive.
      return (err as NodeJS.ErrnoException).code === "EPERM";
    }
  },
  now: () => new Date(),
};

export function acquireInstanceLock(lockPath: string, socket: string, pid: number, deps: LockDeps = defaultLockDeps): InstanceLock {
  const record: LockRecord = { pid, socket, started_at: deps.now().toISOString() };
  // Write the whole record to a private temp file, then link it into place:
  // link() fails atomically when the lock exists, and readers never see a half-written lock.
  const tmp = path.join(path.dirname(lockPath), `.${path.basename(lockPath)}.${pid}.tmp`);
  fs.writeFileSync(tmp, JSON.stringify(record) + "\n", { mode: 0o600 });
  try {
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        fs.linkSync(tmp, lockPath);
        return makeLock(lockPath, pid);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      }
      const holder = readLock(lockPath);
      if (holder && holder.pid !== pid && deps.isAlive(holder.pid)) {
        throw new MiniAgentError(
          "daemon_already_running",
          `another mini-agent-daemon (pid ${holder.pid}) already runs on this state dir, listening on ${holder.socket}`,
          { details: { pid: holder.pid, socket: holder.socket } },
        );
      }
      // Stale (dead pid, our own pid after a pid reuse, or unreadable): take it over.
      fs.rmSync(lockPath, { force: true });
    }
    throw new MiniAgentError("daemon_already_running", `could not take the lock ${lockPath}: another daemon is starting at the same time`);
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}

export function readLock(lockPath: string): LockRecord | null {
  try {
    const parsed = LockRecord.safeParse(JSON.parse(fs.readFileSync(lockPath, "utf8")));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

function makeLock(lockPath: string, pid: number): InstanceLock {
  let released = false;
  return {
    path: lockPath,
    release() {
      if (released) return;
      released = true;
      // Only remove a lock that is still ours (a stale-takeover by a later daemon must survive).
      if (readLock(lockPath)?.pid === pid) fs.rmSync(lockPath, { force: true });
    },
  };
}
