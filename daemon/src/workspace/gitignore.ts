import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import path from "node:path";
import ignore, { type Ignore } from "ignore";

/**
 * `.gitignore` as git reads it, for listing a workspace (list_files, the repo
 * map). Each folder's `.gitignore` applies to paths below that folder; a deeper
 * file overrides a shallower one (its `!pattern` can re-include), and within
 * one file the last matching pattern wins (the `ignore` package, the one
 * eslint uses, implements the pattern language). `.git/info/exclude` counts as
 * rules of the root. Files are read without following a symlink and capped:
 * a `.gitignore` that is a link, not a regular file, or too large is ignored
 * as a whole (it then hides nothing, which only lists more).
 *
 * Synchronous and lazy (one read per folder, on first use), so it can serve
 * as walkTree's `skip` callback, which visits a folder before its entries.
 */
export const GITIGNORE_MAX_BYTES = 256 * 1024;

export interface GitignoreRules {
  /** true when git would not list this workspace-relative path (`isDir`: a folder) */
  ignores(rel: string, isDir: boolean): boolean;
}

export function gitignoreRules(root: string, opts: { maxBytes?: number } = {}): GitignoreRules {
  const maxBytes = opts.maxBytes ?? GITIGNORE_MAX_BYTES;
  const perDir = new Map<string, Ignore | null>();
  const rulesOf = (dirRel: string): Ignore | null => {
    const cached = perDir.get(dirRel);
    if (cached !== undefined) return cached;
    const texts = [readCapped(path.join(root, dirRel, ".gitignore"), maxBytes)];
    if (dirRel === "") texts.push(readCapped(path.join(root, ".git", "info", "exclude"), maxBytes));
    const present = texts.filter((t): t is string => t !== null);
    // one string per file: `add` splits a string into lines, but takes each array item as ONE pattern
    const rules = present.length > 0 ? present.reduce((ig, text) => ig.add(text), ignore({ allowRelativePaths: true })) : null;
    perDir.set(dirRel, rules);
    return rules;
  };
  return {
    ignores(rel, isDir) {
      const parts = rel.split("/");
      // deepest folder first: the first file with a matching pattern decides
      for (let depth = parts.length - 1; depth >= 0; depth--) {
        const dirRel = parts.slice(0, depth).join("/");
        const rules = rulesOf(dirRel);
        if (rules === null) continue;
        const sub = parts.slice(depth).join("/") + (isDir ? "/" : "");
        const t = rules.test(sub);
        if (t.ignored) return true;
        if (t.unignored) return false;
      }
      return false;
    },
  };
}

function readCapped(abs: string, maxBytes: number): string | null {
  let fd: number;
  try {
    fd = openSync(abs, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > maxBytes) return null;
    const buf = Buffer.alloc(st.size);
    let got = 0;
    while (got < buf.length) {
      const n = readSync(fd, buf, got, buf.length - got, got);
      if (n === 0) break;
      got += n;
    }
    return buf.subarray(0, got).toString("utf8");
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}
