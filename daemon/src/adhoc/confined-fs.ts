import fs from "node:fs";
import path from "node:path";
import type { PromiseFsClient } from "isomorphic-git";

/**
 * The file system the git reader is given: reads only, only below one root,
 * and only for a bounded number of entries and a bounded time.
 *
 * Why a wrapper and not plain `fs`: the reader follows what the repository
 * says (an index entry, a `.gitignore`, a ref), and a hostile repository can
 * make any of those a symlink out of the workspace (`.git/index -> /etc/...`).
 * Reading through such a link, or writing anything (a library may refresh the
 * index's stat data), would make the workspace's content decide what the
 * daemon touches on the host. So every path is checked lexically AND by its
 * real path against the root, and every write is refused.
 *
 * A refused path answers ENOENT: to the reader it is simply not there, which
 * keeps its own "missing file" handling in charge. Past the deadline or the
 * entry cap every call answers ENOENT too, so a walk of a huge tree unwinds
 * at once instead of running on after its caller gave up; `stopped` says why.
 */
export interface ConfinedFsLimits {
  /** stop after this many directory entries and stat calls */
  maxEntries: number;
  /** the clock value after which every call fails */
  deadline: number;
  now: () => number;
}

/**
 * The same rules, synchronous: the index and worktree comparison runs in a
 * worker thread (git-state-worker.ts), where blocking calls block nobody and
 * cost far less than a promise per file. Nothing here follows a link.
 */
export interface ConfinedSyncFs {
  /** lstat with nanosecond times; null when absent or refused */
  lstat(p: string): fs.BigIntStats | null;
  /** a regular file's bytes (never through a link, never a FIFO or device); null otherwise */
  readFile(p: string): Buffer | null;
  /** a folder's entries (the folder itself must really be below the root); null when unreadable */
  readdir(p: string): fs.Dirent[] | null;
  /** a link's target text; null otherwise */
  readlink(p: string): string | null;
}

export interface ConfinedFs {
  /** the `fs` object for isomorphic-git (it uses `promises` when it is enumerable) */
  readonly client: PromiseFsClient;
  readonly sync: ConfinedSyncFs;
  /** why the walk was cut short: "deadline" or "entries"; null while within the limits */
  stopped(): "deadline" | "entries" | null;
}

function notFound(p: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`ENOENT: not readable here, '${p}'`), { code: "ENOENT", path: p });
}

function readOnly(p: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`EROFS: the repository is read-only here, '${p}'`), { code: "EROFS", path: p });
}

export function confinedFs(root: string, limits: ConfinedFsLimits): ConfinedFs {
  const realRoot = fs.realpathSync(root);
  let count = 0;
  let stopped: "deadline" | "entries" | null = null;
  // a directory's real path, once checked: a walk asks about each folder many times
  const dirInside = new Map<string, boolean>();

  const lexicallyInside = (p: string) => {
    const abs = path.resolve(p);
    return abs === realRoot || abs.startsWith(realRoot + path.sep);
  };
  const realInside = async (p: string): Promise<boolean> => {
    try {
      const real = await fs.promises.realpath(p);
      return real === realRoot || real.startsWith(realRoot + path.sep);
    } catch {
      return false;
    }
  };
  /** the folder holding `p` is really below the root (no link in its path leads out) */
  const parentInside = async (p: string): Promise<boolean> => {
    if (path.resolve(p) === realRoot) return true;
    const dir = path.dirname(path.resolve(p));
    const known = dirInside.get(dir);
    if (known !== undefined) return known;
    const ok = await realInside(dir);
    dirInside.set(dir, ok);
    return ok;
  };
  const tick = (p: string, n = 1) => {
    if (stopped === null && limits.now() > limits.deadline) stopped = "deadline";
    count += n;
    if (stopped === null && count > limits.maxEntries) stopped = "entries";
    if (stopped !== null) throw notFound(p);
  };
  /** a call that follows links: the target itself must be below the root */
  const following = async (p: string) => {
    tick(p);
    if (!lexicallyInside(p) || !(await realInside(p))) throw notFound(p);
  };
  /** a call on the link itself: only the folders on the way must be below the root */
  const onLink = async (p: string) => {
    tick(p);
    if (!lexicallyInside(p) || !(await parentInside(p))) throw notFound(p);
  };
  const realInsideSync = (p: string): boolean => {
    try {
      const real = fs.realpathSync.native(p);
      return real === realRoot || real.startsWith(realRoot + path.sep);
    } catch {
      return false;
    }
  };
  const parentInsideSync = (p: string): boolean => {
    if (path.resolve(p) === realRoot) return true;
    const dir = path.dirname(path.resolve(p));
    const known = dirInside.get(dir);
    if (known !== undefined) return known;
    const ok = realInsideSync(dir);
    dirInside.set(dir, ok);
    return ok;
  };
  /** the sync face answers null where the promise face throws: its caller treats both as "not there" */
  const allowedOnLink = (p: string): boolean => {
    try {
      tick(p);
    } catch {
      return false;
    }
    return lexicallyInside(p) && parentInsideSync(p);
  };
  const sync: ConfinedSyncFs = {
    lstat(p) {
      if (!allowedOnLink(p)) return null;
      try {
        return fs.lstatSync(p, { bigint: true });
      } catch {
        return null;
      }
    },
    readFile(p) {
      if (!allowedOnLink(p)) return null;
      let fd: number | undefined;
      try {
        // O_NOFOLLOW: a link is never read through; O_NONBLOCK: opening a FIFO does not wait for a writer
        fd = fs.openSync(p, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
        if (!fs.fstatSync(fd).isFile()) return null;
        return fs.readFileSync(fd);
      } catch {
        return null;
      } finally {
        if (fd !== undefined) fs.closeSync(fd);
      }
    },
    readdir(p) {
      try {
        tick(p);
      } catch {
        return null;
      }
      if (!lexicallyInside(p) || !realInsideSync(p)) return null;
      try {
        const entries = fs.readdirSync(p, { withFileTypes: true });
        tick(p, entries.length);
        return entries;
      } catch {
        return null;
      }
    },
    readlink(p) {
      if (!allowedOnLink(p)) return null;
      try {
        return fs.readlinkSync(p);
      } catch {
        return null;
      }
    },
  };
  const refuse = async (p: unknown) => {
    throw readOnly(String(p));
  };

  const promises = {
    readFile: async (p: string, opts?: unknown) => {
      await following(p);
      const st = await fs.promises.stat(p);
      // a FIFO or device would block or never end; only regular files are data
      if (!st.isFile()) throw notFound(p);
      return fs.promises.readFile(p, opts as undefined);
    },
    stat: async (p: string, opts?: unknown) => {
      await following(p);
      return fs.promises.stat(p, opts as undefined);
    },
    lstat: async (p: string, opts?: unknown) => {
      await onLink(p);
      return fs.promises.lstat(p, opts as undefined);
    },
    readdir: async (p: string, opts?: unknown) => {
      await following(p);
      const names = await fs.promises.readdir(p, opts as undefined);
      tick(p, names.length);
      return names;
    },
    readlink: async (p: string, opts?: unknown) => {
      await onLink(p);
      return fs.promises.readlink(p, opts as undefined);
    },
    writeFile: refuse,
    mkdir: refuse,
    rmdir: refuse,
    rm: refuse,
    unlink: refuse,
    symlink: refuse,
    rename: refuse,
    chmod: refuse,
  };
  return { client: { promises }, sync, stopped: () => stopped };
}
