import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { MiniAgentError } from "../errors.js";

const refuse = (message: string) => new MiniAgentError("capture_refused", message);

/**
 * The case folder is written into a temp sibling and renamed into place at the
 * end, so a failure leaves nothing half-written. `out` must not exist, or be an
 * empty folder (not a symlink to one); its parent must exist.
 */
export async function checkOut(out: string): Promise<{ replaceEmpty: boolean }> {
  try {
    const st = await fs.stat(path.dirname(out));
    if (!st.isDirectory()) throw refuse(`${path.dirname(out)} is not a folder`);
  } catch (err) {
    if (err instanceof MiniAgentError) throw err;
    throw refuse(`the folder ${path.dirname(out)} does not exist; create it first`);
  }
  let st: import("node:fs").Stats;
  try {
    st = await fs.lstat(out);
  } catch {
    return { replaceEmpty: false };
  }
  if (!st.isDirectory()) throw refuse(`${out} exists and is not a folder; give a new or empty folder`);
  if ((await fs.readdir(out)).length > 0) throw refuse(`${out} is not empty; give a new or empty folder (nothing was written)`);
  return { replaceEmpty: true };
}

export async function withStaging<T>(out: string, write: (staging: string) => Promise<T>): Promise<T> {
  const { replaceEmpty } = await checkOut(out);
  const staging = path.join(path.dirname(out), `.${path.basename(out)}.capture-${randomBytes(6).toString("hex")}`);
  await fs.mkdir(staging, { mode: 0o755 });
  try {
    const result = await write(staging);
    // re-checked at the end: a folder that filled up meanwhile is someone else's and is never replaced
    if (replaceEmpty) await fs.rmdir(out);
    await fs.rename(staging, out);
    return result;
  } catch (err) {
    await fs.rm(staging, { recursive: true, force: true });
    if ((err as NodeJS.ErrnoException).code === "ENOTEMPTY" || (err as NodeJS.ErrnoException).code === "EEXIST") {
      throw refuse(`${out} appeared or filled up while the case was written; nothing was written`);
    }
    throw err;
  }
}
