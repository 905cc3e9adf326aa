import fs from "node:fs/promises";
import { z } from "zod";
import { SchemaVersion, Sha256Hex } from "../contracts/common.js";
import { canonicalJson, sha256Hex } from "./hash.js";
import { fileHashCache, type FileHashCache } from "./hash-cache.js";
import { hashNoFollow } from "./read.js";
import { walkEntries } from "./walk.js";
import { dependencySkip } from "./dependency-dirs.js";

/**
 * Regular files map to their SHA-256; anything else that is not a folder
 * (symlink, fifo, socket, device) is recorded in `special`, so planting a
 * symlink changes the digest even though its target is never read.
 */
export const Manifest = z.strictObject({
  schema_version: SchemaVersion,
  files: z.record(z.string(), Sha256Hex),
  special: z.record(z.string(), z.string().max(128)),
  digest: Sha256Hex,
});
export type Manifest = z.infer<typeof Manifest>;

export interface ManifestOptions {
  /** absolute paths left out (the control dir, should it live inside the root) */
  excludeAbs?: readonly string[];
  /** hashes of files unchanged since they were last read (default: the daemon's one cache; null: read everything) */
  hashCache?: FileHashCache | null;
}

export function manifestDigest(files: Record<string, string>, special: Record<string, string>): string {
  return sha256Hex(canonicalJson({ schema_version: 1, files, special }));
}

/**
 * SHA-256 of every file, read with O_NOFOLLOW (a file whose fstat stamps are
 * unchanged since it was last hashed is not read again: FileHashCache); the
 * digest is over the sorted manifest.
 */
export async function computeManifest(root: string, opts: ManifestOptions = {}): Promise<Manifest> {
  const cache = opts.hashCache === undefined ? fileHashCache : opts.hashCache;
  const files: Record<string, string> = {};
  const special: Record<string, string> = {};
  const unreadable = (rel: string) => void (special[rel] = "unreadable:dir");
  // the same view as the baseline: dependency folders are not the project's content (workspace/dependency-dirs.ts)
  for await (const entry of walkEntries(root, { excludeAbs: opts.excludeAbs, onUnreadable: unreadable, skip: dependencySkip(root) })) {
    if (entry.type === "dir") continue;
    if (entry.type === "symlink") {
      const target = await fs.readlink(entry.abs).catch(() => "");
      special[entry.rel] = `symlink:${sha256Hex(target)}`;
      continue;
    }
    if (entry.type === "other") {
      special[entry.rel] = "special";
      continue;
    }
    // the walk's lstat already shows an unchanged regular file: no need to open it
    const known = cache?.get(entry.abs, entry.stat);
    if (known !== undefined) {
      files[entry.rel] = known;
      continue;
    }
    const hashed = await hashNoFollow(entry.abs, cache);
    if (hashed.ok) files[entry.rel] = hashed.sha256;
    else special[entry.rel] = `unreadable:${hashed.reason}`;
  }
  return { schema_version: 1, files, special, digest: manifestDigest(files, special) };
}

/** Paths whose entry differs between two manifests (added, removed or changed), sorted. */
export function changedPaths(before: Manifest, after: Manifest): string[] {
  const keys = new Set([...Object.keys(before.files), ...Object.keys(before.special), ...Object.keys(after.files), ...Object.keys(after.special)]);
  const changed: string[] = [];
  for (const k of keys) {
    const a = before.files[k] ?? before.special[k] ?? null;
    const b = after.files[k] ?? after.special[k] ?? null;
    if (a !== b) changed.push(k);
  }
  return changed.sort();
}
