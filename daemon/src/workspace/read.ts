import fs from "node:fs/promises";
import { constants } from "node:fs";
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

export type NoFollowHash = { ok: true; sha256: string; nlink: number } | { ok: false; reason: "absent" | "not_regular" | "symlink" | "unreadable" };

/**
 * SHA-256 of a regular file, opened with O_NOFOLLOW and checked on the open
 * descriptor like readNoFollow. With a cache, the hash is recorded with the
 * file's fstat stamps (see FileHashCache); looking it up is the caller's, from
 * the stamps it already has (computeManifest: the walk's lstat).
 */
export async function hashNoFollow(abs: string, cache: FileHashCache | null): Promise<NoFollowHash> {
  const opened = await openNoFollow(abs);
  if (!opened.ok) return opened;
  const fh = opened.fh;
  try {
    const before = await fh.stat({ bigint: true });
    if (!before.isFile()) return { ok: false, reason: "not_regular" };
    const nlink = Number(before.nlink);
    const sha256 = createHash("sha256")
      .update(await fh.readFile())
      .digest("hex");
    if (cache) cache.set(abs, before, await fh.stat({ bigint: true }), sha256);
    return { ok: true, sha256, nlink };
  } catch {
    return { ok: false, reason: "unreadable" };
  } finally {
    await fh.close();
  }
}
