import type { CaptureLeftOutReason } from "../contracts/api-responses.js";
import { type ExportRule, exportVerdict, type Manifest } from "../workspace/index.js";

/**
 * What of a run's baseline may go into a shareable case: the export rule
 * sandboxes use (workspace/sandbox-export.ts), so a file the model could not
 * read and no sandbox received (forbidden, repository metadata, a hard link
 * whose other name may be outside the workspace) never leaves the host in a
 * case either.
 */
export interface LeftOut {
  path: string;
  reason: CaptureLeftOutReason;
}

export function leftOutOfCase(rule: ExportRule, manifest: Manifest, hardLinked: ReadonlySet<string>): LeftOut[] {
  const out: LeftOut[] = [];
  for (const rel of Object.keys(manifest.files)) {
    const v = exportVerdict(rule, rel, "file", hardLinked.has(rel) ? 2 : 1);
    if (!v.ok) out.push({ path: rel, reason: v.reason });
  }
  for (const [rel, kind] of Object.entries(manifest.special)) {
    // metadata and forbidden paths say so first, whatever their shape
    const v = exportVerdict(rule, rel, kind.startsWith("symlink:") ? "symlink" : "other", 1);
    const reason =
      !v.ok && (v.reason === "repository_metadata" || v.reason === "forbidden")
        ? v.reason
        : kind.startsWith("unreadable:")
          ? "unreadable"
          : kind === "special"
            ? "special"
            : "symlink";
    out.push({ path: rel, reason });
  }
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/**
 * One line per folder the rule refused as a whole (`.git`: 27 files are one
 * line), one per path otherwise. A folder is the shortest prefix of the path
 * that the rule already refuses, so its grouping is the rule's own.
 */
export function groupLeftOut(rule: ExportRule, entries: readonly LeftOut[]): Array<{ path: string; files: number; reason: CaptureLeftOutReason }> {
  const groups = new Map<string, { path: string; files: number; reason: CaptureLeftOutReason }>();
  for (const e of entries) {
    const key = `${e.reason}\0${groupOf(rule, e)}`;
    const g = groups.get(key);
    if (g) g.files++;
    else groups.set(key, { path: groupOf(rule, e), files: 1, reason: e.reason });
  }
  return [...groups.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

function groupOf(rule: ExportRule, e: LeftOut): string {
  const matcher = e.reason === "repository_metadata" ? rule.never : e.reason === "forbidden" ? rule.forbidden : null;
  if (matcher === null) return e.path;
  const parts = e.path.split("/");
  for (let i = 1; i < parts.length; i++) {
    const prefix = parts.slice(0, i).join("/");
    if (matcher(prefix)) return `${prefix}/`;
  }
  return e.path;
}
