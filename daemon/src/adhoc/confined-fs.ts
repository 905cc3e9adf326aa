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

export interface ConfinedFs {
  /** the `fs` object for isomorphic-git (it uses `promises` when it is enumerable) */
  readonly client: PromiseFsClient;
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
  return { client: { promises }, stopped: () => stopped };
}
