import fs from "node:fs/promises";
import { constants, type BigIntStats } from "node:fs";
import { createHash } from "node:crypto";
import type { FileHashCache } from "./hash-cache.js";

export type NoFollowRead =
  | { ok: true; bytes: Buffer; nlink: number }
  | { ok: false; reason: "absent" | "not_regular" | "symlink" | "too_large" | "unreadable" | "moved" };

export interface NoFollowOptions {
  maxBytes?: number;
  /**
   * `abs` was built from a realpath'd root (resolveSafePath): after opening,
   * check that the descriptor really is that path (Linux /proc/self/fd), so a
   * parent folder swapped for a symlink between the check and the open is caught.
   */
  verifyPath?: boolean;
}

/** Where an open descriptor really points, or null where the OS cannot say. */
export async function descriptorPath(fd: number): Promise<string | null> {
  try {
    return await fs.readlink(`/proc/self/fd/${fd}`);
  } catch {
    return null;
  }
}

/** Opens for reading without following a final symlink, and without blocking on a fifo. */
export async function openNoFollow(abs: string): Promise<{ ok: true; fh: fs.FileHandle } | { ok: false; reason: "absent" | "symlink" | "unreadable" }> {
  try {
    return { ok: true, fh: await fs.open(abs, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK) };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return { ok: false, reason: "absent" };
    if (code === "ELOOP") return { ok: false, reason: "symlink" };
    return { ok: false, reason: "unreadable" };
  }
}

/**
 * Opens with O_NOFOLLOW and checks the OPEN descriptor (fstat), so a file
 * swapped for a symlink after a path check is still never followed.
 */
export async function readNoFollow(abs: string, opts: NoFollowOptions | number = {}): Promise<NoFollowRead> {
  const { maxBytes = Number.MAX_SAFE_INTEGER, verifyPath = false } = typeof opts === "number" ? { maxBytes: opts } : opts;
  const opened = await openNoFollow(abs);
  if (!opened.ok) return opened;
  const fh = opened.fh;
  try {
    if (verifyPath) {
      const real = await descriptorPath(fh.fd);
      if (real !== null && real !== abs) return { ok: false, reason: "moved" };
    }
    const st = await fh.stat();
    if (!st.isFile()) return { ok: false, reason: "not_regular" };
    if (st.size > maxBytes) return { ok: false, reason: "too_large" };
    const bytes = await fh.readFile();
    if (bytes.length > maxBytes) return { ok: false, reason: "too_large" };
    return { ok: true, bytes, nlink: st.nlink };
  } catch {
    return { ok: false, reason: "unreadable" };
  } finally {
    await fh.close();
  }
}

/** Bytes read per step: a file is hashed or copied in pieces, never held whole (a 1.5 GB file once was). */
const CHUNK_BYTES = 256 * 1024;

/** SHA-256 of an open file from its start, read in CHUNK_BYTES pieces; `onChunk` sees each piece (a copy writes it). */
export async function hashOpen(fh: fs.FileHandle, onChunk?: (chunk: Buffer) => Promise<void>): Promise<string> {
  const hash = createHash("sha256");
  const buf = Buffer.allocUnsafe(CHUNK_BYTES);
  for (let pos = 0; ; ) {
    const { bytesRead } = await fh.read(buf, 0, CHUNK_BYTES, pos);
    if (bytesRead === 0) break;
    const piece = buf.subarray(0, bytesRead);
    hash.update(piece);
    await onChunk?.(piece);
    pos += bytesRead;
  }
  return hash.digest("hex");
}

export type NoFollowCopy = { ok: true; sha256: string } | { ok: false; reason: "absent" | "not_regular" | "symlink" | "unreadable" };

/**
 * Copies a regular file (opened with O_NOFOLLOW, checked on the descriptor)
 * to `dest`, a new file, and returns the SHA-256 of exactly the bytes
 * written, streaming: memory does not grow with the file.
 */
export async function copyNoFollow(abs: string, dest: string, mode: number): Promise<NoFollowCopy> {
  const opened = await openNoFollow(abs);
  if (!opened.ok) return opened;
  const fh = opened.fh;
  try {
    if (!(await fh.stat()).isFile()) return { ok: false, reason: "not_regular" };
    const out = await fs.open(dest, "wx", mode);
    try {
      const sha256 = await hashOpen(fh, async (piece) => {
        for (let off = 0; off < piece.length; ) off += (await out.write(piece, off, piece.length - off)).bytesWritten;
      });
      return { ok: true, sha256 };
    } finally {
      await out.close();
    }
  } catch (err) {
    // a failed write (disk full) is the copy's failure, not an unreadable source
    if ((err as NodeJS.ErrnoException).syscall === "write" || (err as NodeJS.ErrnoException).code === "EEXIST") throw err;
    return { ok: false, reason: "unreadable" };
  } finally {
    await fh.close();
  }
}

export type NoFollowHash =
  | { ok: true; sha256: string; nlink: number; after: BigIntStats }
  | { ok: false; reason: "absent" | "not_regular" | "symlink" | "unreadable" };

/**
 * SHA-256 of a regular file, opened with O_NOFOLLOW and checked on the open
 * descriptor like readNoFollow. With a cache, the hash is recorded with the
 * file's fstat stamps (see FileHashCache); looking it up is the caller's, from
 * the stamps it already has (computeManifest: the walk's lstat). `after` is the
 * fstat taken once the bytes were read: a caller that records the hash against
 * stamps it took earlier checks that nothing moved in between.
 */
export async function hashNoFollow(abs: string, cache: FileHashCache | null): Promise<NoFollowHash> {
  const opened = await openNoFollow(abs);
  if (!opened.ok) return opened;
  const fh = opened.fh;
  try {
    const before = await fh.stat({ bigint: true });
    if (!before.isFile()) return { ok: false, reason: "not_regular" };
    const nlink = Number(before.nlink);
    const sha256 = await hashOpen(fh);
    const after = await fh.stat({ bigint: true });
    if (cache) cache.set(abs, before, after, sha256);
    return { ok: true, sha256, nlink, after };
  } catch {
    return { ok: false, reason: "unreadable" };
  } finally {
    await fh.close();
  }
}
