import { constants } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import type { FileHashCache } from "../workspace/hash-cache.js";
import type { Matcher } from "../workspace/forbidden.js";
import { listWorkspaceFiles } from "../workspace/listing.js";

/** How much of a file the text sniff reads: git's own binary heuristic looks at the first 8000 bytes. */
const SNIFF_BYTES = 8000;

export interface RepoMapOptions {
  forbidden: Matcher;
  /** never listed, even if it sat inside the root */
  controlDir?: string;
  skipDirs: readonly string[];
  /** extensions that are binary by name: never opened */
  binaryExtensions: readonly string[];
  maxEntries: number;
  maxBytes: number;
  /** the manifest's hash cache: a file whose stamps did not change is not opened again */
  cache: FileHashCache | null;
}

export interface RepoMap {
  /** one `path size` line per text file, sorted by path */
  text: string;
  entries: number;
  truncated: boolean;
  /** files opened for the text sniff (the rest were answered by name or by the cache) */
  sniffed: number;
}

/**
 * The repo map: the text files of the workspace with their sizes, as
 * list_files sees the tree (.gitignore honoured, forbidden files never listed,
 * symlinks never followed) minus the skip list. "Text" is decided by content
 * (no NUL byte in the first 8000 bytes, git's rule), not by name alone, so
 * each file is opened once; the answer is kept in the manifest's hash cache
 * under the file's stamps, so an unchanged tree costs a walk and an lstat per
 * file, and a change costs one open per changed file.
 */
export async function buildRepoMap(root: string, opts: RepoMapOptions): Promise<RepoMap> {
  const binary = new Set(opts.binaryExtensions);
  const listing = await listWorkspaceFiles(root, {
    under: "",
    forbidden: opts.forbidden,
    skipDirs: opts.skipDirs,
    ...(opts.controlDir ? { excludeAbs: [opts.controlDir] } : {}),
  });
  const lines: string[] = [];
  let bytes = 0;
  let truncated = false;
  let sniffed = 0;
  for (const f of listing.files) {
    const dot = f.path.lastIndexOf(".");
    if (dot > f.path.lastIndexOf("/") && binary.has(f.path.slice(dot).toLowerCase())) continue;
    const answer = await isText(path.join(root, f.path), opts.cache);
    if (answer.sniffed) sniffed++;
    if (!answer.text) continue;
    const line = `${f.path} ${f.size}`;
    if (lines.length >= opts.maxEntries || bytes + line.length + 1 > opts.maxBytes) {
      truncated = true;
      break;
    }
    lines.push(line);
    bytes += line.length + 1;
  }
  return { text: lines.join("\n"), entries: lines.length, truncated, sniffed };
}

/** Whether a file reads as text; a file that cannot be opened safely (gone, now a link) is left out. */
async function isText(abs: string, cache: FileHashCache | null): Promise<{ text: boolean; sniffed: boolean }> {
  if (cache !== null) {
    try {
      const known = cache.getTextual(abs, await fs.lstat(abs, { bigint: true }));
      if (known !== undefined) return { text: known, sniffed: false };
    } catch {
      return { text: false, sniffed: false };
    }
  }
  let fh: fs.FileHandle;
  try {
    fh = await fs.open(abs, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return { text: false, sniffed: true };
  }
  try {
    const before = await fh.stat({ bigint: true });
    if (!before.isFile()) return { text: false, sniffed: true };
    const buf = Buffer.alloc(Math.min(SNIFF_BYTES, Number(before.size)));
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    const text = !buf.subarray(0, bytesRead).includes(0);
    cache?.setTextual(abs, before, await fh.stat({ bigint: true }), text);
    return { text, sniffed: true };
  } catch {
    return { text: false, sniffed: true };
  } finally {
    await fh.close();
  }
}
