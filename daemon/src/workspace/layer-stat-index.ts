import { z } from "zod";
import { DEPENDENCY_DIRS } from "./dependency-dirs.js";
import type { WalkStat } from "./walk.js";

/**
 * What a dependency folder's entries looked like when their content was
 * hashed, so the next run on the same workspace can take each file's hash
 * from here instead of reading it again (git's index does the same for the
 * work tree). A 150 MiB node_modules took 4.5 s to re-key at every run
 * creation; an lstat of each entry takes a fraction of that.
 *
 * A file's recorded hash is used only when every stamp of its lstat is
 * exactly the recorded one: device, inode, size, mode, mtime and ctime in
 * nanoseconds. Any write moves ctime, and no unprivileged process can set
 * ctime back (utimes sets atime and mtime only), so a rewrite of the same
 * size with the mtime put back is still seen; a file replaced by another
 * (rename over it) has another inode. What the stamps cannot tell is a
 * second write within the same clock tick as the one recorded: such a file
 * is "racily clean", as git calls it, and its hash is read again (RACY_NS).
 * Anything else the index cannot vouch for (an entry it does not hold, a
 * link, a folder) costs no file content and is taken from the walk as before.
 */
const Ns = z.string().regex(/^\d{1,30}$/);
const Sha = z.string().regex(/^[a-f0-9]{64}$/);

const IndexedEntry = z.strictObject({
  /** relative to the dependency folder, as the layer names it */
  rel: z.string().min(1),
  type: z.enum(["file", "dir", "symlink"]),
  size: z.number().int().min(0),
  mode: z.number().int().min(0),
  dev: Ns,
  ino: Ns,
  mtime_ns: Ns,
  ctime_ns: Ns,
  /** a link's target as readlink gave it */
  target: z.string().optional(),
  /** a file's SHA-256, absent when the file moved while it was read (it is read again next time) */
  sha256: Sha.optional(),
});
export type IndexedEntry = z.infer<typeof IndexedEntry>;

export const LayerStatIndex = z.strictObject({
  schema_version: z.literal(1),
  /** the workspace (its real path) and folder this index describes: another's index is never used */
  workspace: z.string().min(1),
  folder: z.enum(DEPENDENCY_DIRS),
  /** wall clock when the walk that made this index began, in ns since the epoch: the racily-clean line */
  walked_at_ns: Ns,
  /** the content key this walk led to (the layer record of that key is the layer) */
  key: Sha,
  entries: z.array(IndexedEntry),
});
export type LayerStatIndex = z.infer<typeof LayerStatIndex>;

/**
 * How close to the walk's start a file's newest stamp may be and still be
 * trusted. git's rule is "not older than the index's write time"; ours is
 * measured from the walk's START (a file hashed late in a long walk may have
 * been written again in the tick the walk saw) and widened by 2 s, so a
 * filesystem with whole-second stamps, or a kernel clock a tick behind the
 * wall clock, never makes a fresh write look old.
 */
export const RACY_NS = 2_000_000_000n;

/** The stamps an entry is compared by, in the index's spelling. */
export function indexedStamps(st: WalkStat): Pick<IndexedEntry, "size" | "mode" | "dev" | "ino" | "mtime_ns" | "ctime_ns"> {
  return {
    size: Number(st.size),
    mode: Number(st.mode),
    dev: String(st.dev),
    ino: String(st.ino),
    mtime_ns: String(st.mtimeNs),
    ctime_ns: String(st.ctimeNs),
  };
}

/** Whether two stamp sets are the same file, unchanged. */
export function sameStamps(a: ReturnType<typeof indexedStamps>, b: ReturnType<typeof indexedStamps>): boolean {
  return a.size === b.size && a.mode === b.mode && a.dev === b.dev && a.ino === b.ino && a.mtime_ns === b.mtime_ns && a.ctime_ns === b.ctime_ns;
}

/** Looks up recorded file hashes of one index, on the rules above. */
export class StatIndexLookup {
  private readonly files = new Map<string, IndexedEntry>();
  private readonly racyFrom: bigint;

  constructor(index: LayerStatIndex) {
    for (const e of index.entries) if (e.type === "file" && e.sha256) this.files.set(e.rel, e);
    this.racyFrom = BigInt(index.walked_at_ns) - RACY_NS;
  }

  /** the recorded SHA-256 of the file at `rel` when its lstat `st` vouches for it, else undefined */
  sha256(rel: string, st: WalkStat): string | undefined {
    const e = this.files.get(rel);
    if (e === undefined || !sameStamps(e, indexedStamps(st))) return undefined;
    // biome-ignore lint/complexity/useMathMinMax: these are bigints, which Math.max does not take
    const newest = st.ctimeNs > st.mtimeNs ? st.ctimeNs : st.mtimeNs;
    return newest >= this.racyFrom ? undefined : e.sha256;
  }
}

/** An index's file body as read from disk: null for anything that is not this workspace's and folder's index (never an error). */
export function parseStatIndex(raw: unknown, workspace: string, folder: string): LayerStatIndex | null {
  const parsed = LayerStatIndex.safeParse(raw);
  if (!parsed.success || parsed.data.workspace !== workspace || parsed.data.folder !== folder) return null;
  return parsed.data;
}
