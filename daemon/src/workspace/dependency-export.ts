import fs from "node:fs/promises";
import path from "node:path";
import type { ExportSpec } from "../contracts/sandbox.js";
import { canonicalJson, sha256Hex } from "./hash.js";
import { fileHashCache } from "./hash-cache.js";
import { INSTALL_INPUTS, LOCK_FILES, type DependencyDir, type InstalledDir } from "./dependency-dirs.js";
import { hashNoFollow } from "./read.js";
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
}

function inside(child: string, parent: string): boolean {
  const r = path.relative(parent, child);
  return r === "" || (!r.startsWith("..") && !path.isAbsolute(r));
}

/** Lists, checks and hashes one dependency folder of `root` (a real folder, not a link: findDependencyDirs). */
export async function listLayerContent(root: string, folder: DependencyDir, spec?: ExportSpec): Promise<LayerContent> {
  const base = path.join(root, folder);
  const rule = createExportRule(spec);
  const ws = (rel: string) => `${folder}/${rel}`;
  const walked = await walkTree(base, {
    skip: (rel, type) => type === "other" || rule.never(ws(rel)) || (rule.forbidden(ws(rel)) && !rule.include(ws(rel))),
  });
  const entries: LayerEntry[] = [];
  let bytes = 0;
  for (const e of walked) {
    const executable = (Number(e.stat.mode) & 0o111) !== 0;
    if (e.type === "dir") {
      entries.push({ rel: e.rel, abs: e.abs, type: "dir", executable: true, size: 0, stat: e.stat });
    } else if (e.type === "symlink") {
      const raw = await fs.readlink(e.abs).catch(() => null);
      if (raw === null) continue;
      const resolved = path.resolve(path.dirname(e.abs), raw);
      // lexically inside the folder (an absolute host path into it is rewritten relative); anything else is dropped
      if (!inside(resolved, base) || resolved === base) continue;
      const target = path.relative(path.dirname(e.abs), resolved);
      entries.push({ rel: e.rel, abs: e.abs, type: "symlink", executable: false, size: 0, target, stat: e.stat });
    } else if (e.type === "file") {
      const hashed = await hashNoFollow(e.abs, fileHashCache);
      if (!hashed.ok) continue;
      bytes += e.size;
      entries.push({ rel: e.rel, abs: e.abs, type: "file", executable, size: e.size, sha256: hashed.sha256, stat: e.stat });
    }
  }
  const locks: Record<string, string> = {};
  for (const name of LOCK_FILES[folder]) {
    const read = await hashNoFollow(path.join(root, name), fileHashCache);
    if (read.ok) locks[name] = read.sha256;
  }
  const content = entries.map((e) => [e.rel, e.type, e.executable, e.sha256 ?? e.target ?? ""]);
  const key = sha256Hex(canonicalJson({ layer: 1, folder, locks, content }));
  return { folder, entries, locks, bytes, key };
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
