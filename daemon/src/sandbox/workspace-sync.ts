import fs from "node:fs";
import path from "node:path";
import { MiniAgentError } from "../errors.js";

/**
 * What a warm sandbox's /workspace holds, as host metadata, so the next sync
 * can send only what changed. A host file counts as changed when any of
 * inode, mode, size, mtime or ctime differ (ctime is set by the kernel on
 * every write, chmod, rename or utimes, so an edit cannot keep it).
 */
export interface ManifestEntry {
  kind: "file" | "dir" | "link";
  mode: number;
  size: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
  ino: bigint;
  link: string | null;
}
export type Manifest = Map<string, ManifestEntry>;

export type SyncPlan =
  | { kind: "none" }
  /** send everything; with clearFirst the sandbox's /workspace must be emptied first (something was deleted) */
  | { kind: "full"; clearFirst: boolean }
  /** send only these relative paths (a new directory is sent whole); nothing was deleted */
  | { kind: "partial"; entries: string[] };

/** The same tree packWorkspace sends: no `.git` anywhere, only files, directories and symlinks (never followed). */
export function workspaceManifest(dir: string): Manifest {
  const root = path.resolve(dir);
  const out: Manifest = new Map();
  let rootStat: fs.BigIntStats;
  try {
    rootStat = fs.lstatSync(root, { bigint: true });
  } catch (err) {
    throw new MiniAgentError("not_found", `workspace ${dir} does not exist`, { cause: err });
  }
  if (!rootStat.isDirectory()) throw new MiniAgentError("invalid_fields", `workspace ${dir} is not a directory (symlinks are not followed)`);
  const walk = (rel: string) => {
    for (const name of fs.readdirSync(path.join(root, rel)).sort()) {
      if (name === ".git") continue;
      const r = rel ? `${rel}/${name}` : name;
      const abs = path.join(root, r);
      const st = fs.lstatSync(abs, { bigint: true });
      const kind = st.isDirectory() ? "dir" : st.isFile() ? "file" : st.isSymbolicLink() ? "link" : null;
      if (!kind) continue;
      out.set(r, { kind, mode: Number(st.mode), size: st.size, mtimeNs: st.mtimeNs, ctimeNs: st.ctimeNs, ino: st.ino, link: kind === "link" ? fs.readlinkSync(abs) : null });
      if (kind === "dir") walk(r);
    }
  };
  walk("");
  return out;
}

function same(a: ManifestEntry, b: ManifestEntry): boolean {
  if (a.kind !== b.kind || a.mode !== b.mode) return false;
  // a directory's own times change whenever an entry in it does: its entries are compared instead
  if (a.kind === "dir") return true;
  return a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs && a.ino === b.ino && a.link === b.link;
}

/**
 * `synced`: what the sandbox holds (null: its /workspace is empty). Deletions
 * (and a changed type or directory mode) need the sandbox emptied and a full
 * sync, so the copy mirrors the host exactly; otherwise only new and changed
 * entries go in (tar extraction replaces a file in place).
 */
export function planSync(synced: Manifest | null, current: Manifest): SyncPlan {
  if (synced === null) return { kind: "full", clearFirst: false };
  for (const [rel, was] of synced) {
    const now = current.get(rel);
    if (!now || now.kind !== was.kind || (was.kind === "dir" && now.mode !== was.mode)) return { kind: "full", clearFirst: true };
  }
  const entries: string[] = [];
  const newDirs: string[] = [];
  for (const [rel, now] of current) {
    if (newDirs.some((d) => rel.startsWith(`${d}/`))) continue; // sent with its new parent directory
    const was = synced.get(rel);
    if (was && same(was, now)) continue;
    entries.push(rel);
    if (!was && now.kind === "dir") newDirs.push(rel);
  }
  return entries.length === 0 ? { kind: "none" } : { kind: "partial", entries };
}
