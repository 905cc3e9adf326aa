import type { Matcher } from "./forbidden.js";
import { gitignoreRules } from "./gitignore.js";
import { walkEntries } from "./walk.js";

export interface ListedFile {
  /** workspace-relative path */
  path: string;
  size: number;
}

export interface Listing {
  /** regular files, sorted by path */
  files: ListedFile[];
  /** entries left out because .gitignore names them (a folder counts once) */
  gitignored: number;
  /** symlinks and special files: never followed, never listed as files */
  links_and_special: number;
}

export interface ListingOptions {
  /** workspace-relative folder to list ("" = the root); must already be proven safe */
  under: string;
  forbidden: Matcher;
  /** never entered (the run's control dir, if it sits inside the workspace) */
  excludeAbs?: readonly string[];
  /** honour .gitignore (default true) */
  gitignore?: boolean;
  /** folder names never entered, at any depth (a repo map's skip list); default none */
  skipDirs?: readonly string[];
}

/**
 * What a workspace holds as a person browsing it would see it: regular files
 * only, forbidden paths never listed (not even by name), .gitignore honoured,
 * symlinks never followed. Hard-linked files are listed (they are files of
 * the workspace); reading them is the read tools' business.
 */
export async function listWorkspaceFiles(root: string, opts: ListingOptions): Promise<Listing> {
  const ignored = opts.gitignore === false ? null : gitignoreRules(root);
  const skipDirs = new Set(opts.skipDirs ?? []);
  const prefix = opts.under === "" ? "" : `${opts.under}/`;
  let gitignored = 0;
  let linksAndSpecial = 0;
  const base = opts.under === "" ? root : `${root}/${opts.under}`;
  // streamed: only each file's path and size is kept, never the walk's entry (its stats, its absolute path)
  const files: ListedFile[] = [];
  const entries = walkEntries(base, {
    excludeAbs: opts.excludeAbs,
    skip: (sub, type) => {
      const rel = prefix + sub;
      if (opts.forbidden(rel)) return true;
      if (type === "dir" && skipDirs.has(sub.slice(sub.lastIndexOf("/") + 1))) return true;
      if (ignored?.ignores(rel, type === "dir")) {
        gitignored++;
        return true;
      }
      if (type === "symlink" || type === "other") {
        linksAndSpecial++;
        return true;
      }
      return false;
    },
  });
  for await (const e of entries) if (e.type === "file") files.push({ path: prefix + e.rel, size: e.size });
  return { files, gitignored, links_and_special: linksAndSpecial };
}
