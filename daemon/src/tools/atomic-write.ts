import fs from "node:fs/promises";
import { constants } from "node:fs";
import path from "node:path";
import { MiniAgentError } from "../errors.js";
import type { Matcher } from "../workspace/forbidden.js";
import { descriptorPath } from "../workspace/read.js";
import { resolveSafePath } from "../workspace/safe-path.js";

export interface AtomicWriteInput {
  workspaceRoot: string;
  controlDir: string;
  rel: string;
  content: string;
  mode: number;
  /** deterministic per action, so a crashed attempt's leftover is simply replaced */
  tempName: string;
  forbidden: Matcher;
}

async function fsyncDir(dir: string): Promise<void> {
  const fh = await fs.open(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

async function writeTemp(file: string, content: string, mode: number): Promise<void> {
  await fs.rm(file, { force: true });
  const fh = await fs.open(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  try {
    await fh.writeFile(content, "utf8");
    await fh.chmod(mode & 0o777);
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** Creates missing parent folders one at a time, refusing anything that is not a plain folder. */
async function ensureParents(root: string, rel: string): Promise<void> {
  const parts = rel.split("/").slice(0, -1);
  let cur = root;
  for (const part of parts) {
    cur = path.join(cur, part);
    try {
      await fs.mkdir(cur, { mode: 0o755 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    const st = await fs.lstat(cur);
    if (st.isSymbolicLink() || !st.isDirectory()) throw new MiniAgentError("path_denied", `${part} is not a plain folder`);
  }
}

/**
 * temp file in the control dir -> fsync -> rename into place -> fsync the
 * folder. When the control dir sits on another filesystem (rename gives EXDEV)
 * the temp file moves next to the target instead; the rename stays atomic.
 * Throws MiniAgentError only if nothing was put in place.
 */
export async function atomicWrite(input: AtomicWriteInput): Promise<void> {
  const root = await fs.realpath(input.workspaceRoot);
  await ensureParents(root, input.rel);
  // re-resolve right before the rename: the parents may have been swapped meanwhile
  const p = await resolveSafePath(root, input.rel, { purpose: "create", forbidden: input.forbidden, controlDir: input.controlDir });
  if (!p.ok || p.kind === "dir") throw new MiniAgentError("path_denied", p.ok ? `${input.rel} is a directory` : p.message);
  const tmpDir = path.join(path.resolve(input.controlDir), "tmp");
  await fs.mkdir(tmpDir, { recursive: true, mode: 0o700 });
  const tmp = path.join(tmpDir, input.tempName);
  await writeTemp(tmp, input.content, input.mode);
  // the folder must still be the checked one (not swapped for a symlink) right before the rename
  const parent = path.dirname(p.abs);
  const dirFd = await fs.open(parent, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW).catch(() => null);
  const dirReal = dirFd === null ? null : await descriptorPath(dirFd.fd);
  await dirFd?.close();
  if (dirFd === null || (dirReal !== null && dirReal !== parent)) {
    await fs.rm(tmp, { force: true });
    throw new MiniAgentError("path_denied", `the folder of ${input.rel} changed during the write; nothing was changed`);
  }
  try {
    await fs.rename(tmp, p.abs);
  } catch (err) {
    await fs.rm(tmp, { force: true });
    if ((err as NodeJS.ErrnoException).code !== "EXDEV") throw new MiniAgentError("internal", "write failed; nothing was changed", { cause: err });
    const sibling = path.join(path.dirname(p.abs), `.mini-agent-${input.tempName}`);
    await writeTemp(sibling, input.content, input.mode);
    try {
      await fs.rename(sibling, p.abs);
    } catch (err2) {
      await fs.rm(sibling, { force: true });
      throw new MiniAgentError("internal", "write failed; nothing was changed", { cause: err2 });
    }
  }
  // the new content is in place; a failing folder fsync must not be reported as "nothing written"
  await fsyncDir(path.dirname(p.abs)).catch(() => undefined);
}
