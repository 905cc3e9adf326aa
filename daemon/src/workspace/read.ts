import fs from "node:fs/promises";
import { constants } from "node:fs";

export type NoFollowRead =
  | { ok: true; bytes: Buffer; nlink: number }
  | { ok: false; reason: "absent" | "not_regular" | "symlink" | "too_large" | "unreadable" };

/**
 * Opens with O_NOFOLLOW and checks the OPEN descriptor (fstat), so a file
 * swapped for a symlink after a path check is still never followed.
 */
export async function readNoFollow(abs: string, maxBytes = Number.MAX_SAFE_INTEGER): Promise<NoFollowRead> {
  let fh: fs.FileHandle;
  try {
    fh = await fs.open(abs, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return { ok: false, reason: "absent" };
    if (code === "ELOOP") return { ok: false, reason: "symlink" };
    return { ok: false, reason: "unreadable" };
  }
  try {
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
