import { constants, createWriteStream } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { MiniAgentError } from "../errors.js";

/**
 * A task's control folder (acceptance harness and hidden inputs) is copied
 * into the state dir when a run is created. Issue 10 item 5: it had no limit
 * and was copied synchronously (a 165 MB folder stalled the API for 2.9 s), and
 * a folder holding a socket, or the state dir itself, gave 500. Now it is
 * walked first (lstat, async, stopping at the first limit), and only what that
 * walk accepted is copied, with async fs, by inode: an entry that changed since
 * is refused, never followed.
 */
export interface ControlLimits {
  /** bytes of all regular files together */
  maxBytes: number;
  /** files and folders together (a million empty folders is not a small control dir either) */
  maxFiles: number;
}

interface ControlEntry {
  rel: string;
  type: "dir" | "file";
  size: number;
  executable: boolean;
  dev: number;
  ino: number;
}

export interface CheckedControlDir {
  /** realpath of the folder */
  root: string;
  entries: ControlEntry[];
  bytes: number;
}

export type ControlRefusal =
  | "missing"
  | "not_a_directory"
  | "state_dir"
  | "overlaps_workspace"
  | "not_regular"
  | "unreadable"
  | "too_large"
  | "too_many_files"
  | "changed";

function refuse(reason: ControlRefusal, message: string, details: Record<string, unknown> = {}): MiniAgentError {
  return new MiniAgentError("invalid_request", message, { details: { control_dir: reason, ...details } });
}

/** a === b, or one inside the other */
function overlaps(a: string, b: string): boolean {
  const inside = (child: string, parent: string) => child === parent || child.startsWith(parent.endsWith(path.sep) ? parent : parent + path.sep);
  return inside(a, b) || inside(b, a);
}

/** realpath of a path that may not exist yet: its nearest existing ancestor, resolved, plus the rest */
async function realpathOfPlanned(p: string): Promise<string> {
  const abs = path.resolve(p);
  try {
    return await fs.realpath(abs);
  } catch {
    const parent = path.dirname(abs);
    return parent === abs ? abs : path.join(await realpathOfPlanned(parent), path.basename(abs));
  }
}

function mib(bytes: number): string {
  return `${+(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

function kindOf(st: import("node:fs").Stats): string {
  if (st.isSymbolicLink()) return "a symlink";
  if (st.isSocket()) return "a socket";
  if (st.isFIFO()) return "a fifo";
  if (st.isCharacterDevice() || st.isBlockDevice()) return "a device";
  return "not a regular file";
}

/**
 * Everything createRun needs to know about a control folder before anything
 * exists: it is a folder, it is neither the state dir nor around or inside it,
 * it does not overlap the workspace (the model must never see it), it holds
 * only regular files and folders, and it stays within the limits.
 */
export async function checkControlDir(dir: string, opts: { stateDir: string; workspace: string; limits: ControlLimits }): Promise<CheckedControlDir> {
  let root: string;
  try {
    root = await fs.realpath(dir);
  } catch {
    throw refuse("missing", "the control dir does not exist");
  }
  if (!(await fs.stat(root)).isDirectory()) throw refuse("not_a_directory", "the control dir is not a directory");
  const stateDir = await fs.realpath(opts.stateDir);
  if (overlaps(root, stateDir)) {
    throw refuse("state_dir", "the control dir must be outside the daemon's state dir (it is the state dir, inside it, or holds it)");
  }
  if (overlaps(root, await realpathOfPlanned(opts.workspace))) {
    throw refuse("overlaps_workspace", "the control dir and the workspace must not overlap: acceptance assets are never visible to the model");
  }

  const { maxBytes, maxFiles } = opts.limits;
  const limits = { max_bytes: maxBytes, max_files: maxFiles };
  const entries: ControlEntry[] = [];
  let bytes = 0;
  const visit = async (abs: string, rel: string): Promise<void> => {
    let names: string[];
    try {
      names = (await fs.readdir(abs)).sort();
    } catch {
      throw refuse("unreadable", `control dir folder ${rel === "" ? "." : rel} cannot be listed`, { path: rel === "" ? "." : rel });
    }
    for (const name of names) {
      const childAbs = path.join(abs, name);
      const childRel = rel === "" ? name : `${rel}/${name}`;
      let st: import("node:fs").Stats;
      try {
        st = await fs.lstat(childAbs);
      } catch {
        throw refuse("changed", `control dir entry ${childRel} vanished while it was being checked; try again`, { path: childRel });
      }
      if (!st.isDirectory() && !st.isFile()) {
        throw refuse("not_regular", `control dir entry ${childRel} is ${kindOf(st)}; only regular files and folders are accepted`, { path: childRel });
      }
      if (entries.length + 1 > maxFiles) {
        throw refuse("too_many_files", `the control dir holds more than ${maxFiles} files and folders, the daemon's limit (--control-max-files)`, limits);
      }
      if (st.isFile()) {
        bytes += st.size;
        if (bytes > maxBytes) {
          throw refuse("too_large", `the control dir holds more than ${maxBytes} bytes (${mib(maxBytes)}), the daemon's limit (--control-max-bytes)`, limits);
        }
      }
      entries.push({ rel: childRel, type: st.isFile() ? "file" : "dir", size: st.size, executable: (st.mode & 0o111) !== 0, dev: st.dev, ino: st.ino });
      if (st.isDirectory()) await visit(childAbs, childRel);
    }
  };
  await visit(root, "");
  return { root, entries, bytes };
}

/**
 * Copies exactly the checked entries into `dest` (which must not exist) with
 * async fs, a few files at a time. Each file is opened without following a
 * link or blocking on a fifo and must still be the inode the walk saw; at most
 * the size the walk saw is copied. On any failure `dest` is removed.
 */
export async function copyControlDir(checked: CheckedControlDir, dest: string): Promise<void> {
  try {
    await fs.mkdir(dest, { mode: 0o700 });
    for (const e of checked.entries) if (e.type === "dir") await fs.mkdir(path.join(dest, e.rel), { mode: 0o700 });
    const files = checked.entries.filter((e) => e.type === "file");
    let next = 0;
    let failed = false;
    const worker = async () => {
      for (let e = files[next++]; e && !failed; e = files[next++]) {
        await copyOne(checked.root, dest, e).catch((err: unknown) => {
          failed = true;
          throw err;
        });
      }
    };
    // every worker has stopped before dest is removed, so nothing is written into it afterwards
    const settled = await Promise.allSettled(Array.from({ length: 4 }, worker));
    const firstFailure = settled.find((s): s is PromiseRejectedResult => s.status === "rejected");
    if (firstFailure) throw firstFailure.reason;
  } catch (err) {
    await fs.rm(dest, { recursive: true, force: true });
    throw err;
  }
}

async function copyOne(root: string, dest: string, e: ControlEntry): Promise<void> {
  const changed = () => refuse("changed", `control dir entry ${e.rel} changed while the run was being created; try again`, { path: e.rel });
  let fh: fs.FileHandle;
  try {
    fh = await fs.open(path.join(root, e.rel), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    throw changed();
  }
  try {
    const st = await fh.stat();
    if (!st.isFile() || st.dev !== e.dev || st.ino !== e.ino) throw changed();
    const out = path.join(dest, e.rel);
    const mode = e.executable ? 0o700 : 0o600;
    if (e.size === 0) {
      await fs.writeFile(out, "", { flag: "wx", mode });
      return;
    }
    await pipeline(fh.createReadStream({ start: 0, end: e.size - 1, autoClose: false }), createWriteStream(out, { flags: "wx", mode }));
  } finally {
    await fh.close();
  }
}

/** The staging folder of a run being created: renamed to the run's control dir once complete. */
export function stagingName(runId: string): string {
  return `.creating-${runId}`;
}

/**
 * At start-up, before any create: a daemon killed during a create leaves a
 * staging folder, or (between the rename and the ledger insert) a run folder
 * the ledger does not know. Both are removed; nothing else is touched.
 */
export async function sweepControlRoot(controlRoot: string, knownRunIds: ReadonlySet<string>): Promise<string[]> {
  let names: string[];
  try {
    names = await fs.readdir(controlRoot);
  } catch {
    return [];
  }
  const removed = names.filter((n) => /^\.creating-run_[0-9a-f]+$/.test(n) || (/^run_[0-9a-f]+$/.test(n) && !knownRunIds.has(n)));
  for (const n of removed) await fs.rm(path.join(controlRoot, n), { recursive: true, force: true });
  return removed;
}
