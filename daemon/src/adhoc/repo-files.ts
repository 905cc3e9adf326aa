import fs from "node:fs";
import path from "node:path";

/**
 * Read-only access to the user's folder for drafting: detection only READS
 * files, never runs anything from the repository. Symlinks are never followed
 * (a link to /etc/passwd named package.json is not the project's file).
 */
export interface RepoFiles {
  /** a regular file's text, or null (absent, a link, not a file, larger than maxBytes) */
  readText(rel: string, maxBytes?: number): string | null;
  isFile(rel: string): boolean;
  isDir(rel: string): boolean;
  /** relative paths of regular files under `relDir` (no links), at most `limit`, skipping dot folders and node_modules */
  listFiles(relDir: string, limit: number): string[];
}

const DEFAULT_MAX_BYTES = 256 * 1024;

function lstat(p: string): fs.Stats | null {
  try {
    return fs.lstatSync(p);
  } catch {
    return null;
  }
}

export function repoFiles(root: string): RepoFiles {
  const abs = (rel: string) => path.join(root, rel);
  return {
    readText(rel, maxBytes = DEFAULT_MAX_BYTES) {
      const st = lstat(abs(rel));
      if (!st?.isFile() || st.size > maxBytes) return null;
      try {
        return fs.readFileSync(abs(rel), "utf8");
      } catch {
        return null;
      }
    },
    isFile: (rel) => lstat(abs(rel))?.isFile() === true,
    isDir: (rel) => lstat(abs(rel))?.isDirectory() === true,
    listFiles(relDir, limit) {
      const out: string[] = [];
      const stack = [relDir];
      while (stack.length > 0 && out.length < limit) {
        const dir = stack.pop()!;
        let entries: fs.Dirent[];
        try {
          entries = fs.readdirSync(abs(dir), { withFileTypes: true });
        } catch {
          continue;
        }
        for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
          const rel = dir === "." ? e.name : `${dir}/${e.name}`;
          if (e.isDirectory() && !e.name.startsWith(".") && e.name !== "node_modules") stack.push(rel);
          else if (e.isFile()) out.push(rel);
          if (out.length >= limit) break;
        }
      }
      return out;
    },
  };
}
