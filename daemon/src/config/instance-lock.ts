import crypto from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { z } from "zod";
import { MiniAgentError } from "../errors.js";

/**
 * One daemon per state dir. The lock itself is an abstract Unix socket named
 * from the state dir's realpath: the kernel frees it when the owner's
 * descriptors close, which happens as the process exits, before a parent
 * reaps it. The old lock (a pid in a file) took an unreaped zombie of a
 * SIGKILLed daemon for a live one, so a restart right after the kill exited 75
 * (issue 10 item 7); a pid that is alive proves nothing, a socket that is
 * bound does.
 *
 * The lock file beside it only says who holds the lock (pid and API socket), so
 * a second start can name the daemon that already runs; it is never the lock.
 * Abstract sockets are per network namespace: two daemons in different ones
 * (a container and its host sharing a state dir) do not see each other.
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
  now(): Date;
}

export const defaultLockDeps: LockDeps = { now: () => new Date() };

/** The abstract socket's name (leading NUL: no file on disk); the same for every path to one state dir. */
export function lockAddress(stateDir: string): string {
  const real = fs.realpathSync(stateDir);
  return `\0mini-agent-daemon-${crypto.createHash("sha256").update(real).digest("hex").slice(0, 32)}`;
}

export async function acquireInstanceLock(lockPath: string, socket: string, pid: number, deps: LockDeps = defaultLockDeps): Promise<InstanceLock> {
  const server = net.createServer((conn) => conn.destroy());
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(lockAddress(path.dirname(lockPath)), () => {
        server.off("error", reject);
        resolve();
      });
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EADDRINUSE") throw err;
    const holder = readLock(lockPath);
    throw new MiniAgentError(
      "daemon_already_running",
      holder
        ? `another mini-agent-daemon (pid ${holder.pid}) already runs on this state dir, listening on ${holder.socket}`
        : `another mini-agent-daemon already runs on this state dir (it is still starting, or its lock file ${lockPath} is gone)`,
      { details: holder ? { pid: holder.pid, socket: holder.socket } : {} },
    );
  }
  // the lock must not keep a stopping daemon's event loop alive
  server.unref();
  try {
    writeLockRecord(lockPath, { pid, socket, started_at: deps.now().toISOString() });
  } catch (err) {
    server.close();
    throw err;
  }
  let released = false;
  return {
    path: lockPath,
    release() {
      if (released) return;
      released = true;
      // the record first: once the socket is free a new daemon may write its own
      if (readLock(lockPath)?.pid === pid) fs.rmSync(lockPath, { force: true });
      server.close();
    },
  };
}

/** Whole record or nothing: a private temp file renamed over whatever a dead daemon left. */
function writeLockRecord(lockPath: string, record: LockRecord): void {
  const tmp = path.join(path.dirname(lockPath), `.${path.basename(lockPath)}.${record.pid}.tmp`);
  try {
    fs.writeFileSync(tmp, JSON.stringify(record) + "\n", { mode: 0o600 });
    fs.renameSync(tmp, lockPath);
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
