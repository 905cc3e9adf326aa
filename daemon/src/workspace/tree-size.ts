import fs from "node:fs/promises";
import path from "node:path";
import { isDependencyDirName } from "./dependency-dirs.js";

/**
 * What a copy of a tree would cost, counted before anything is copied: the
 * apparent size of its regular files (a sparse file counts by its length,
 * since a tar or a plain copy writes it out dense) and how many there are.
 *
 * The walk keeps no list of what it saw: a folder is read through an open
 * directory stream, its files are lstat'ed in small batches and only the
 * names of its subfolders are held until they are visited, so memory follows
 * the tree's depth and its widest folder, never its file count (a 100,000-file
 * workspace once took the daemon to 884 MB while it was listed whole).
 * Links are never followed (lstat; a symlinked folder is not entered).
 */
export interface TreeSize {
  /** apparent bytes of all regular files */
  bytes: number;
  /** regular files */
  files: number;
  /** the largest dependency folders met (outermost only, largest first, at most MAX_DEPENDENCY_DIRS) */
  dependencyDirs: DependencyDirSize[];
}

export interface DependencyDirSize {
  /** `/`-separated path below the root */
  rel: string;
  bytes: number;
  files: number;
}

export interface TreeSizeOptions {
  /** true leaves a folder out with all it holds (repository metadata never copied, for one) */
  skipDir?: (rel: string) => boolean;
  /** the filesystem calls, so a test can watch what is opened (default node:fs/promises) */
  fs?: TreeSizeFs;
}

export interface TreeSizeFs {
  opendir(dir: string): Promise<AsyncIterable<import("node:fs").Dirent>>;
  lstat(file: string): Promise<{ size: number; isFile(): boolean; isDirectory(): boolean }>;
}

const MAX_DEPENDENCY_DIRS = 3;
const LSTAT_BATCH = 32;

const realFs: TreeSizeFs = {
  // a small buffer: the stream hands entries over a few at a time
  opendir: (dir) => fs.opendir(dir, { bufferSize: 64 }),
  lstat: (file) => fs.lstat(file),
};

interface Tally {
  bytes: number;
  files: number;
}

/** Measures the tree under `root` (which must be a listable folder; a subfolder that cannot be read counts as empty). */
export async function measureTree(root: string, opts: TreeSizeOptions = {}): Promise<TreeSize> {
  const fsx = opts.fs ?? realFs;
  const total: Tally = { bytes: 0, files: 0 };
  const deps: DependencyDirSize[] = [];

  const visit = async (abs: string, rel: string, tallies: Tally[]): Promise<void> => {
    let dir: AsyncIterable<import("node:fs").Dirent>;
    try {
      dir = await fsx.opendir(abs);
    } catch (err) {
      if (rel === "") throw err;
      return;
    }
    const subdirs: string[] = [];
    let batch: string[] = [];
    const flush = async () => {
      const stats = await Promise.all(batch.map((p) => fsx.lstat(p).catch(() => null)));
      batch = [];
      for (const st of stats) {
        // the type comes from lstat, not the dirent: a file swapped for a folder since is not counted as a file
        if (st?.isFile()) for (const t of tallies) (t.bytes += st.size), t.files++;
      }
    };
    for await (const d of dir) {
      if (d.isDirectory()) subdirs.push(d.name);
      // symlinks and special files are never copied, so never counted
      else if (d.isFile()) {
        batch.push(path.join(abs, d.name));
        if (batch.length >= LSTAT_BATCH) await flush();
      }
    }
    await flush();
    for (const name of subdirs) {
      const childRel = rel === "" ? name : `${rel}/${name}`;
      if (opts.skipDir?.(childRel)) continue;
      // only the outermost: node_modules inside node_modules is part of the first
      if (isDependencyDirName(name) && tallies.length === 1) {
        const t: Tally = { bytes: 0, files: 0 };
        await visit(path.join(abs, name), childRel, [...tallies, t]);
        keepLargest(deps, { rel: childRel, ...t });
      } else {
        await visit(path.join(abs, name), childRel, tallies);
      }
    }
  };
  await visit(path.resolve(root), "", [total]);
  return { bytes: total.bytes, files: total.files, dependencyDirs: deps };
}

function keepLargest(list: DependencyDirSize[], d: DependencyDirSize): void {
  if (d.files === 0) return;
  list.push(d);
  list.sort((a, b) => b.bytes - a.bytes || (a.rel < b.rel ? -1 : 1));
  if (list.length > MAX_DEPENDENCY_DIRS) list.length = MAX_DEPENDENCY_DIRS;
}
