import { createHash } from "node:crypto";

/**
 * git's index file (`.git/index`) read as data, formats 2, 3 and 4, as
 * git's Documentation/gitformat-index.txt describes it.
 *
 * Why our own reader: isomorphic-git refuses format 4 (what
 * `feature.manyFiles` turns on, so the large repositories), and its status walk
 * hashes far more than it needs to; with the entries' stat data in hand the
 * caller hashes only the files whose stat data differs, as git does.
 *
 * A split index (`link`) keeps most entries in another file and a sparse index
 * (`sdir`) folds whole folders into one entry: reading either as if it were
 * whole would give a wrong list, so they give none, with the reason. Any
 * other extension git itself would refuse (a lower-case first letter means
 * "required") is refused the same way; optional ones are skipped.
 */
export interface IndexEntry {
  path: string;
  ctimeS: number;
  ctimeNs: number;
  mtimeS: number;
  mtimeNs: number;
  ino: number;
  mode: number;
  uid: number;
  gid: number;
  /** the file's size, truncated to 32 bits as git stores it */
  size: number;
  /** the blob's object name, hex */
  oid: string;
  /** 0 when merged; 1–3 are the sides of a conflict */
  stage: number;
  /** `git update-index --skip-worktree` / sparse checkout: the worktree copy is not compared */
  skipWorktree: boolean;
  /** `git add -N`: listed, with the empty blob's name */
  intentToAdd: boolean;
}

/**
 * The cache-tree (`TREE` extension): for each folder whose entries did not
 * change since a tree was last written for it, that tree's object name. A
 * folder whose name equals HEAD's tree there holds exactly HEAD's files, so
 * the staged comparison need not read it (git's own status skips it too).
 */
export type CacheTree = Map<string, string>;

export type IndexRead = { ok: true; version: number; entries: IndexEntry[]; cacheTree: CacheTree } | { ok: false; reason: string };

const HASH_BYTES = 20; // SHA-1; a SHA-256 repository is refused before its index is read
const ENTRY_FIXED = 62; // ten 32-bit stat fields, the object name, 16 bits of flags

export function parseIndex(buf: Buffer): IndexRead {
  if (buf.length < 12 + HASH_BYTES || buf.toString("latin1", 0, 4) !== "DIRC") return { ok: false, reason: "its index is not a git index" };
  const version = buf.readUInt32BE(4);
  if (version < 2 || version > 4) return { ok: false, reason: `its index is in git's format ${version}, which is not read here` };
  const body = buf.length - HASH_BYTES;
  const sum = createHash("sha1").update(buf.subarray(0, body)).digest();
  if (!sum.equals(buf.subarray(body))) return { ok: false, reason: "its index is damaged (checksum mismatch)" };

  const count = buf.readUInt32BE(8);
  const entries: IndexEntry[] = [];
  let at = 12;
  let previous = Buffer.alloc(0);
  const damaged: IndexRead = { ok: false, reason: "its index is damaged (an entry runs past its end)" };
  for (let i = 0; i < count; i++) {
    const start = at;
    if (at + ENTRY_FIXED > body) return damaged;
    const flags = buf.readUInt16BE(at + 60);
    at += ENTRY_FIXED;
    let extended = 0;
    if (flags & 0x4000) {
      if (version < 3) return { ok: false, reason: "its index is damaged (an extended entry in format 2)" };
      if (at + 2 > body) return damaged;
      extended = buf.readUInt16BE(at);
      at += 2;
    }
    let name: string;
    if (version === 4) {
      // the path is the previous one minus `strip` bytes from its end, plus this NUL-ended suffix
      const v = readVarint(buf, at, body);
      if (v === null) return damaged;
      at = v.next;
      const end = buf.indexOf(0, at);
      if (end < 0 || end >= body) return damaged;
      if (v.value > previous.length) return damaged;
      previous = Buffer.concat([previous.subarray(0, previous.length - v.value), buf.subarray(at, end)]);
      name = previous.toString("utf8");
      at = end + 1;
    } else {
      const end = buf.indexOf(0, at);
      if (end < 0 || end >= body) return damaged;
      name = buf.toString("utf8", at, end);
      // 1–8 NULs so the entry's length is a multiple of 8
      at = start + Math.ceil((end + 1 - start) / 8) * 8;
    }
    entries.push({
      path: name,
      ctimeS: buf.readUInt32BE(start),
      ctimeNs: buf.readUInt32BE(start + 4),
      mtimeS: buf.readUInt32BE(start + 8),
      mtimeNs: buf.readUInt32BE(start + 12),
      ino: buf.readUInt32BE(start + 20),
      mode: buf.readUInt32BE(start + 24),
      uid: buf.readUInt32BE(start + 28),
      gid: buf.readUInt32BE(start + 32),
      size: buf.readUInt32BE(start + 36),
      oid: buf.toString("hex", start + 40, start + 40 + HASH_BYTES),
      stage: (flags >> 12) & 0x3,
      skipWorktree: (extended & 0x4000) !== 0,
      intentToAdd: (extended & 0x2000) !== 0,
    });
  }

  let cacheTree: CacheTree = new Map();
  while (at < body) {
    if (at + 8 > body) return { ok: false, reason: "its index is damaged (a truncated extension)" };
    const sig = buf.toString("latin1", at, at + 4);
    const size = buf.readUInt32BE(at + 4);
    if (at + 8 + size > body) break; // reported below
    if (sig === "TREE") cacheTree = parseCacheTree(buf.subarray(at + 8, at + 8 + size));
    if (sig === "link") return { ok: false, reason: "its index is split (core.splitIndex), which is not read here" };
    if (sig === "sdir") return { ok: false, reason: "its index is sparse (index.sparse), which is not read here" };
    const first = sig.charCodeAt(0);
    if (!(first >= 0x41 && first <= 0x5a)) return { ok: false, reason: `its index has an extension this reader does not know (${printable(sig)})` };
    at += 8 + size;
  }
  if (at !== body) return { ok: false, reason: "its index is damaged (an extension runs past its end)" };
  return { ok: true, version, entries, cacheTree };
}

/**
 * Pre-order: a NUL-ended folder name (empty for the root), the ASCII entry
 * count (-1: invalidated, then no name follows), a space, the ASCII number of
 * subfolders, a newline, and the tree's name. A damaged extension only loses
 * the shortcut: what was read before the damage stays, and is still exact.
 */
function parseCacheTree(ext: Buffer): CacheTree {
  const out: CacheTree = new Map();
  const stack: Array<{ path: string; left: number }> = [];
  let at = 0;
  while (at < ext.length) {
    const nul = ext.indexOf(0, at);
    const nl = nul < 0 ? -1 : ext.indexOf(0x0a, nul);
    if (nul < 0 || nl < 0) return out;
    const name = ext.toString("utf8", at, nul);
    const m = /^(-?\d+) (\d+)$/.exec(ext.toString("latin1", nul + 1, nl));
    if (m === null) return out;
    at = nl + 1;
    while (stack.length > 0 && stack[stack.length - 1]!.left === 0) stack.pop();
    const parent = stack[stack.length - 1];
    if (parent) parent.left--;
    const full = parent === undefined ? "" : parent.path === "" ? name : `${parent.path}/${name}`;
    if (Number(m[1]) >= 0) {
      if (at + HASH_BYTES > ext.length) return out;
      out.set(full, ext.toString("hex", at, at + HASH_BYTES));
      at += HASH_BYTES;
    }
    stack.push({ path: full, left: Number(m[2]) });
  }
  return out;
}

/** git's offset varint (varint.c): each continuation adds one before shifting, so every value has one encoding */
function readVarint(buf: Buffer, at: number, end: number): { value: number; next: number } | null {
  if (at >= end) return null;
  let c = buf[at++]!;
  let value = c & 0x7f;
  while (c & 0x80) {
    if (at >= end || value > 0xffffff) return null;
    c = buf[at++]!;
    value = ((value + 1) << 7) | (c & 0x7f);
  }
  return { value, next: at };
}

function printable(sig: string): string {
  return JSON.stringify(sig.replace(/[^\x20-\x7e]/g, "?"));
}
