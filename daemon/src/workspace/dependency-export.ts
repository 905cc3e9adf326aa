import fs from "node:fs/promises";
import path from "node:path";
import type { ExportSpec } from "../contracts/sandbox.js";
import { canonicalJson, sha256Hex } from "./hash.js";
import { fileHashCache } from "./hash-cache.js";
import { INSTALL_INPUTS, LOCK_FILES, type DependencyDir, type InstalledDir } from "./dependency-dirs.js";
import { indexedStamps, sameStamps, StatIndexLookup, type IndexedEntry, type LayerStatIndex } from "./layer-stat-index.js";
import { hashNoFollow, type NoFollowHash } from "./read.js";
import { createExportRule } from "./sandbox-export.js";
import { walkTree, type WalkStat } from "./walk.js";

/**
 * What of a dependency folder goes into its read-only layer: the one export
 * rule (sandbox-export.ts: forbidden files such as an `.npmrc` stay out,
 * `.git` never goes in, special files never), with two differences a layer
 * needs. A symlink that resolves inside the folder is kept, as a relative
 * link, so `node_modules/.bin/*` works; one that leaves it is dropped. A
 * hard-linked file (pnpm's store) is kept as a plain copy of its bytes: the
 * layer is read-only, so nothing can write through the other name.
 */
export interface LayerEntry {
  /** relative to the dependency folder */
  rel: string;
  abs: string;
  type: "file" | "dir" | "symlink";
  executable: boolean;
  size: number;
  /** a kept symlink's target, relative to the link's own folder */
  target?: string;
  /** a file's SHA-256 (the layer's key covers it) */
  sha256?: string;
  stat: WalkStat;
}

export interface LayerContent {
  folder: DependencyDir;
  entries: LayerEntry[];
  /** the lock files beside the folder that exist, by name, with their SHA-256 */
  locks: Record<string, string>;
  bytes: number;
  /** the content address: folder, lock files, every kept entry (path, kind, exec bit, bytes or link target) */
  key: string;
  /** the stat index of this listing (layer-stat-index.ts), for the next listing of the same folder */
  index: LayerStatIndex;
  /** files whose hash came from the index given, unread; the rest were read */
  fromIndex: number;
  hashed: number;
  /** the index given describes this listing exactly (nothing to write back) */
  unchanged: boolean;
}

export interface ListLayerOptions {
  /** the last listing's stat index of this workspace and folder: files it vouches for are not read again */
  index?: LayerStatIndex | null;
  /** reads and hashes one file (default hashNoFollow): a test counts what is read */
  hashFile?: (abs: string) => Promise<NoFollowHash>;
  /** wall clock in ms since the epoch, for the index's racily-clean line */
  now?: () => number;
}

function inside(child: string, parent: string): boolean {
  const r = path.relative(parent, child);
  return r === "" || (!r.startsWith("..") && !path.isAbsolute(r));
}

function sameEntries(a: readonly IndexedEntry[], b: readonly IndexedEntry[]): boolean {
  return (
    a.length === b.length &&
    a.every((e, i) => {
      const f = b[i]!;
      return e.rel === f.rel && e.type === f.type && e.target === f.target && e.sha256 === f.sha256 && sameStamps(e, f);
    })
  );
}

const defaultHashFile = (abs: string) => hashNoFollow(abs, fileHashCache);

/**
 * Lists, checks and hashes one dependency folder of `root` (a real folder, not a link: findDependencyDirs).
 * With `opts.index`, a file whose lstat the index vouches for keeps its recorded hash unread; the key is
 * computed from the same list either way, so it is the key a full read gives.
 */
export async function listLayerContent(root: string, folder: DependencyDir, spec?: ExportSpec, opts: ListLayerOptions = {}): Promise<LayerContent> {
  const base = path.join(root, folder);
  const rule = createExportRule(spec);
  const ws = (rel: string) => `${folder}/${rel}`;
  const hashFile = opts.hashFile ?? defaultHashFile;
  const lookup = opts.index ? new StatIndexLookup(opts.index) : null;
  // taken before the first lstat: a file written after it is racily clean against this index (RACY_NS)
  const walkedAtNs = BigInt(Math.round((opts.now ?? Date.now)())) * 1_000_000n;
  const walked = await walkTree(base, {
    skip: (rel, type) => type === "other" || rule.never(ws(rel)) || (rule.forbidden(ws(rel)) && !rule.include(ws(rel))),
  });
  const entries: LayerEntry[] = [];
  const indexed: IndexedEntry[] = [];
  let bytes = 0;
  let fromIndex = 0;
  let hashed = 0;
  for (const e of walked) {
    const executable = (Number(e.stat.mode) & 0o111) !== 0;
    const stamps = indexedStamps(e.stat);
    if (e.type === "dir") {
      entries.push({ rel: e.rel, abs: e.abs, type: "dir", executable: true, size: 0, stat: e.stat });
      indexed.push({ rel: e.rel, type: "dir", ...stamps });
    } else if (e.type === "symlink") {
      const raw = await fs.readlink(e.abs).catch(() => null);
      if (raw === null) continue;
      const resolved = path.resolve(path.dirname(e.abs), raw);
      // lexically inside the folder (an absolute host path into it is rewritten relative); anything else is dropped
      if (!inside(resolved, base) || resolved === base) continue;
      const target = path.relative(path.dirname(e.abs), resolved);
      entries.push({ rel: e.rel, abs: e.abs, type: "symlink", executable: false, size: 0, target, stat: e.stat });
      indexed.push({ rel: e.rel, type: "symlink", ...stamps, target: raw });
    } else if (e.type === "file") {
      let sha256 = lookup?.sha256(e.rel, e.stat);
      // recorded against the walk's stamps only when the file was still exactly that file once read
      let vouched = sha256 !== undefined;
      if (sha256 === undefined) {
        const read = await hashFile(e.abs);
        if (!read.ok) continue;
        sha256 = read.sha256;
        vouched = sameStamps(indexedStamps(read.after), stamps);
        hashed++;
      } else fromIndex++;
      bytes += e.size;
      entries.push({ rel: e.rel, abs: e.abs, type: "file", executable, size: e.size, sha256, stat: e.stat });
      indexed.push({ rel: e.rel, type: "file", ...stamps, ...(vouched && { sha256 }) });
    }
  }
  const locks: Record<string, string> = {};
  for (const name of LOCK_FILES[folder]) {
    const read = await hashNoFollow(path.join(root, name), fileHashCache);
    if (read.ok) locks[name] = read.sha256;
  }
  const content = entries.map((e) => [e.rel, e.type, e.executable, e.sha256 ?? e.target ?? ""]);
  const key = sha256Hex(canonicalJson({ layer: 1, folder, locks, content }));
  const index: LayerStatIndex = { schema_version: 1, workspace: root, folder, walked_at_ns: String(walkedAtNs), key, entries: indexed };
  const unchanged = hashed === 0 && opts.index?.key === key && sameEntries(opts.index.entries, indexed);
  return { folder, entries, locks, bytes, key, index, fromIndex, hashed, unchanged };
}

/**
 * Where an install sandbox's result is found again (issue 25): the workspace
 * has no such folder of its own, so its layer is looked up by what the
 * install was made from (INSTALL_INPUTS: package.json and its lock files;
 * requirements files or pyproject.toml; go.mod and go.sum) and the image it
 * was installed in (a native add-on built in one image is not known to load
 * in another). Null when none of the files that say what to install exists.
 * The layer itself is still keyed by its content.
 */
export async function installLookupKey(root: string, imageDigest: string, folder: InstalledDir = "node_modules"): Promise<string | null> {
  const inputs = INSTALL_INPUTS[folder];
  const files: Record<string, string> = {};
  for (const name of [...inputs.needs, ...inputs.also]) {
    const read = await hashNoFollow(path.join(root, name), fileHashCache);
    if (read.ok) files[name] = read.sha256;
  }
  if (!inputs.needs.some((n) => files[n])) return null;
  // node_modules' key is what it was before other folders could be installed: its records stay valid
  return sha256Hex(canonicalJson({ install: 1, folder, files, image: imageDigest }));
}
