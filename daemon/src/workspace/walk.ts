import fs from "node:fs/promises";
import path from "node:path";

export interface WalkEntry {
  rel: string;
  abs: string;
  type: "file" | "dir" | "symlink" | "other";
  nlink: number;
  size: number;
  /** what of the lstat its readers use (nanosecond stamps: the manifest's hash cache compares them) */
  stat: WalkStat;
}

/**
 * The lstat fields the walk's readers use. A full BigIntStats costs over a
 * kilobyte, and a walk of 100,000 files holds one per entry: kept whole, a
 * single walk took 131 MB of heap.
 */
export type WalkStat = Pick<import("node:fs").BigIntStats, "dev" | "ino" | "mode" | "nlink" | "size" | "mtimeMs" | "mtimeNs" | "ctimeNs">;

function slim(st: import("node:fs").BigIntStats): WalkStat {
  return { dev: st.dev, ino: st.ino, mode: st.mode, nlink: st.nlink, size: st.size, mtimeMs: st.mtimeMs, mtimeNs: st.mtimeNs, ctimeNs: st.ctimeNs };
}

export interface WalkOptions {
  /** return true to leave out an entry (and, for a folder, everything beneath it) */
  skip?: (rel: string, type: WalkEntry["type"]) => boolean;
  /** absolute paths never entered (the control dir if it sits inside the root) */
  excludeAbs?: readonly string[];
  /** a folder below the root that cannot be listed; without it such a folder is silently empty */
  onUnreadable?: (rel: string) => void;
}

/**
 * Lists a tree WITHOUT following symlinks (lstat only; a symlinked folder is an
 * entry, never entered). Sorted by relative path so every consumer (manifest,
 * search, glob expansion) sees the same order on every machine.
 */
export async function walkTree(root: string, opts: WalkOptions = {}): Promise<WalkEntry[]> {
  const out: WalkEntry[] = [];
  for await (const entry of walkEntries(root, opts)) out.push(entry);
  return out;
}

/**
 * The same entries in the same order, one at a time: memory follows the
 * tree's depth and its widest folder, not its file count. The baseline and
 * the manifest use it, since holding a 100,000-file walk whole (an object,
 * two path strings and five bigints per entry) was the largest part of the
 * daemon's peak when a run was created on such a workspace.
 *
 * The order is that of the sorted relative paths, without sorting them all:
 * a folder's entries are sorted with each subfolder placed twice, its own
 * entry under its name and its contents under its name and a slash (no
 * sibling's name holds a slash, so its contents come in one piece there,
 * e.g. `a`, `a-c`, then `a/b`).
 */
export async function* walkEntries(root: string, opts: WalkOptions = {}): AsyncGenerator<WalkEntry> {
  const exclude = new Set((opts.excludeAbs ?? []).map((p) => path.resolve(p)));
  async function* visit(dirAbs: string, dirRel: string): AsyncGenerator<WalkEntry> {
    let names: string[];
    try {
      names = await fs.readdir(dirAbs);
    } catch (err) {
      if (dirRel === "") throw err; // the root itself must be listable
      opts.onUnreadable?.(dirRel);
      return;
    }
    const stats = await lstatAll(names.map((name) => path.join(dirAbs, name)).filter((abs) => !exclude.has(abs)));
    const items: Array<{ key: string; entry: WalkEntry; contents: boolean }> = [];
    for (const [abs, st] of stats) {
      const name = path.basename(abs);
      const rel = dirRel === "" ? name : `${dirRel}/${name}`;
      if (st === null) continue; // vanished between readdir and lstat
      const type: WalkEntry["type"] = st.isSymbolicLink() ? "symlink" : st.isDirectory() ? "dir" : st.isFile() ? "file" : "other";
      if (opts.skip?.(rel, type)) continue;
      const entry: WalkEntry = { rel, abs, type, nlink: Number(st.nlink), size: Number(st.size), stat: slim(st) };
      items.push({ key: rel, entry, contents: false });
      if (type === "dir") items.push({ key: `${rel}/`, entry, contents: true });
    }
    items.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    for (const item of items) {
      if (item.contents) yield* visit(item.entry.abs, item.entry.rel);
      else yield item.entry;
    }
  }
  yield* visit(root, "");
}

/** How many lstat calls of one folder are in flight at once: one at a time, a walk waits on a thread-pool round trip per entry. */
const LSTAT_BATCH = 32;

/** lstat of each path, in order; null for one that vanished. */
async function lstatAll(paths: string[]): Promise<Array<[string, import("node:fs").BigIntStats | null]>> {
  const out: Array<[string, import("node:fs").BigIntStats | null]> = [];
  for (let i = 0; i < paths.length; i += LSTAT_BATCH) {
    const batch = paths.slice(i, i + LSTAT_BATCH);
    const stats = await Promise.all(batch.map((p) => fs.lstat(p, { bigint: true }).catch(() => null)));
    for (let j = 0; j < batch.length; j++) out.push([batch[j]!, stats[j]!]);
  }
  return out;
}
