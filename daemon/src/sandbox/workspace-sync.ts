import type { ExportList } from "../workspace/index.js";

/**
 * What a warm sandbox's /workspace holds, as host metadata, so the next sync
 * can send only what changed. A host file counts as changed when any of
 * inode, mode, size, mtime or ctime differ (ctime is set by the kernel on
 * every write, chmod, rename, link or utimes, so an edit cannot keep it).
 */
export interface ManifestEntry {
  kind: "file" | "dir" | "symlink";
  /** a symlink's target as sent (the export rule's rewrite); a link whose target changes is sent again */
  target?: string;
  mode: number;
  size: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
  ino: bigint;
}
export type Manifest = Map<string, ManifestEntry>;

export type SyncPlan =
  | { kind: "none" }
  /** send everything; with clearFirst the sandbox's /workspace must be emptied first (something was deleted) */
  | { kind: "full"; clearFirst: boolean }
  /** send only these relative paths (each one listed, a new folder's content too); nothing was deleted */
  | { kind: "partial"; entries: string[] };

/**
 * The host metadata of exactly what the export list sends (the same walk, so
 * the manifest can never hold a path the rule keeps out: a forbidden file
 * that changes on the host is not in it, and is never synced).
 */
export function exportManifest(list: ExportList): Manifest {
  const out: Manifest = new Map();
  for (const e of list.entries) {
    const st = e.stat;
    out.set(e.rel, {
      kind: e.type,
      mode: Number(st.mode),
      size: st.size,
      mtimeNs: st.mtimeNs,
      ctimeNs: st.ctimeNs,
      ino: st.ino,
      ...(e.target !== undefined && { target: e.target }),
    });
  }
  return out;
}

function same(a: ManifestEntry, b: ManifestEntry): boolean {
  if (a.kind !== b.kind || a.mode !== b.mode) return false;
  // a directory's own times change whenever an entry in it does: its entries are compared instead
  if (a.kind === "dir") return true;
  return a.target === b.target && a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs && a.ino === b.ino;
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
  for (const [rel, now] of current) {
    const was = synced.get(rel);
    if (!was || !same(was, now)) entries.push(rel);
  }
  return entries.length === 0 ? { kind: "none" } : { kind: "partial", entries };
}
