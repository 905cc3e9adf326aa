import type { BigIntStats as FullStats } from "node:fs";

/** The stamps an entry is keyed by (a walk keeps only these of its lstat). */
type BigIntStats = Pick<FullStats, "dev" | "ino" | "size" | "mtimeNs" | "ctimeNs">;

/**
 * Content hashes of files the daemon has already read, so a manifest of an
 * unchanged tree costs an open and an fstat per file instead of reading and
 * hashing every byte again (a manifest is taken on every model turn and two
 * or three times per write).
 *
 * An entry is served only while the file's identity and change stamps are
 * exactly those it was hashed with: device, inode, size, mtime and ctime in
 * nanoseconds. Any write changes ctime, and ctime cannot be set by an
 * unprivileged process (utimes sets atime and mtime only), so a file whose
 * content changed never matches. A file that changed within `racyMs` of the
 * hash is "racily clean" (as git calls it): a second write in the same clock
 * tick would leave every stamp as it was, so such a file is hashed again
 * every time until it has been quiet for that long.
 */
export interface HashCacheOptions {
  /** how recent a change (ctime or mtime) must be for the entry not to be trusted */
  racyMs?: number;
  /** most entries kept; beyond it the cache starts over */
  maxEntries?: number;
  /** wall clock in ms (tests move it) */
  now?: () => number;
}

interface Entry {
  key: string;
  sha256: string;
}

export class FileHashCache {
  private readonly entries = new Map<string, Entry>();
  /** whether a file looked like text (the repo map's sniff), under the same stamp rules as the hashes */
  private readonly textual = new Map<string, { key: string; textual: boolean }>();
  private readonly racyNs: bigint;
  private readonly maxEntries: number;
  private readonly now: () => number;

  constructor(opts: HashCacheOptions = {}) {
    this.racyNs = BigInt(Math.round((opts.racyMs ?? 2_000) * 1e6));
    this.maxEntries = opts.maxEntries ?? 200_000;
    this.now = opts.now ?? (() => Date.now());
  }

  get size(): number {
    return this.entries.size;
  }

  /** the cached hash of `abs` when `st` (an fstat of the open file) still matches, else undefined */
  get(abs: string, st: BigIntStats): string | undefined {
    const e = this.entries.get(abs);
    if (e === undefined || e.key !== stamp(st) || this.racy(st)) return undefined;
    return e.sha256;
  }

  /**
   * Records a hash read between two fstats of the same open file; kept only
   * when nothing changed during the read and the file is not racily clean.
   */
  set(abs: string, before: BigIntStats, after: BigIntStats, sha256: string): void {
    const key = stamp(before);
    if (key !== stamp(after) || this.racy(after)) {
      this.entries.delete(abs);
      return;
    }
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    this.entries.set(abs, { key, sha256 });
  }

  /** the cached "is text" answer for `abs` when `st` (an lstat or fstat of it) still matches, else undefined */
  getTextual(abs: string, st: BigIntStats): boolean | undefined {
    const e = this.textual.get(abs);
    if (e === undefined || e.key !== stamp(st) || this.racy(st)) return undefined;
    return e.textual;
  }

  /** Records a sniff read between two fstats of the same open file, on the same terms as set(). */
  setTextual(abs: string, before: BigIntStats, after: BigIntStats, textual: boolean): void {
    const key = stamp(before);
    if (key !== stamp(after) || this.racy(after)) {
      this.textual.delete(abs);
      return;
    }
    if (this.textual.size >= this.maxEntries) this.textual.clear();
    this.textual.set(abs, { key, textual });
  }

  private racy(st: BigIntStats): boolean {
    const now = BigInt(Math.round(this.now())) * 1_000_000n;
    // biome-ignore lint/complexity/useMathMinMax: these are bigints, which Math.max does not take
    const newest = st.ctimeNs > st.mtimeNs ? st.ctimeNs : st.mtimeNs;
    // a stamp in the future (clock stepped back) is never trusted either
    return now - newest < this.racyNs;
  }
}

function stamp(st: BigIntStats): string {
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
}

/** The daemon's one cache (all workspaces: keys are absolute paths). */
export const fileHashCache = new FileHashCache();
