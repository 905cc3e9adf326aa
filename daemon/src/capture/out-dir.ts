import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { MiniAgentError } from "../errors.js";

const refuse = (message: string) => new MiniAgentError("capture_refused", message);

/**
 * The case folder is written into a temp sibling and renamed into place at the
 * end, so a failure leaves nothing half-written. `out` must not exist, or be an
 * empty folder (not a symlink to one). Its missing parents are made (as
 * `mkdir -p` would) and removed again when the capture fails.
 */
export async function checkOut(out: string, stateDir: string): Promise<{ replaceEmpty: boolean }> {
  await refuseInsideStateDir(out, stateDir);
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

/**
 * The state dir holds the ledger, credentials and reports: a case written
 * there would be shared from it, and a write there could shadow the daemon's
 * own files. Checked on the resolved path (links followed) of the deepest part
 * that exists, so a link to the state dir is refused too.
 */
async function refuseInsideStateDir(out: string, stateDir: string): Promise<void> {
  const state = await fs.realpath(stateDir).catch(() => path.resolve(stateDir));
  let existing = path.resolve(out);
  const rest: string[] = [];
  for (;;) {
    try {
      existing = await fs.realpath(existing);
      break;
    } catch {
      const up = path.dirname(existing);
      if (up === existing) break;
      rest.unshift(path.basename(existing));
      existing = up;
    }
  }
  const resolved = path.join(existing, ...rest);
  const r = path.relative(state, resolved);
  if (r === "" || (r !== ".." && !r.startsWith(`..${path.sep}`) && !path.isAbsolute(r)))
    throw new MiniAgentError("capture_out_invalid", `--out ${out} is inside the daemon's state dir ${state}; give a folder outside it (nothing was written)`, {
      details: { out, state_dir: state },
    });
}

export async function withStaging<T>(out: string, stateDir: string, write: (staging: string) => Promise<T>): Promise<T> {
  const { replaceEmpty } = await checkOut(out, stateDir);
  let made: string | undefined;
  try {
    made = await fs.mkdir(path.dirname(out), { recursive: true, mode: 0o755 });
  } catch (err) {
    throw refuse(`the folder ${path.dirname(out)} cannot be made: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const staging = path.join(path.dirname(out), `.${path.basename(out)}.capture-${randomBytes(6).toString("hex")}`);
  try {
    await fs.mkdir(staging, { mode: 0o755 });
    const result = await write(staging);
    // re-checked at the end: a folder that filled up meanwhile is someone else's and is never replaced
    if (replaceEmpty) await fs.rmdir(out);
    await fs.rename(staging, out);
    return result;
  } catch (err) {
    await fs.rm(staging, { recursive: true, force: true });
    // a failed capture leaves no folder it made behind (the first parent mkdir created, with what is under it)
    if (made !== undefined) await fs.rm(made, { recursive: true, force: true });
    if ((err as NodeJS.ErrnoException).code === "ENOTEMPTY" || (err as NodeJS.ErrnoException).code === "EEXIST") {
      throw refuse(`${out} appeared or filled up while the case was written; nothing was written`);
    }
    throw err;
  }
}
