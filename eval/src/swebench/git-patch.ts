import { applyPatch, parsePatch } from "diff";
import { MiniAgentError } from "../../../daemon/src/errors.js";
import type { TreeFile } from "./repo-tree.js";

/**
 * A SWE-bench patch (`git diff` output) applied to a tree in memory, with the
 * `diff` package's own unified-diff rule: no git program, no file written. A
 * hunk that does not apply, a binary or renamed file, or a path that is not a
 * plain relative one refuses the whole patch (the instance is then skipped,
 * saying which file).
 */

/** One file the patch touched: its content before (null: new) and after (null: deleted). */
export interface FileChange {
  rel: string;
  before: TreeFile | null;
  after: TreeFile | null;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

function refuse(what: string, message: string): MiniAgentError {
  return new MiniAgentError("invalid_fields", `${what}: ${message}`);
}

/** `a/x/y.py` → `x/y.py`; a path that could leave the tree or name git's own folder is refused. */
function relOf(name: string, what: string): string {
  const rel = name.replace(/^[ab]\//, "");
  const parts = rel.split("/");
  if (
    rel === "" ||
    rel.startsWith("/") ||
    rel.includes("\\") ||
    rel.includes("\0") ||
    parts.some((p) => p === "" || p === "." || p === ".." || p.toLowerCase() === ".git")
  )
    throw refuse(what, `unsafe path ${JSON.stringify(name)}`);
  return rel;
}

/** The patch cut into one text per file (`diff --git` sections); a plain unified diff is one section per `---` header. */
function sections(patch: string): string[] {
  if (/^diff --git /m.test(patch)) return patch.split(/^(?=diff --git )/m).filter((s) => s.startsWith("diff --git "));
  return patch.trim() === "" ? [] : [patch];
}

function textOf(f: TreeFile, rel: string, what: string): string {
  try {
    return utf8.decode(f.data);
  } catch {
    throw refuse(what, `${rel} is not UTF-8 text; a binary file cannot be patched here`);
  }
}

/** Applies `patch` to `files` (not changed); returns each touched file, in the patch's order. */
export function applyGitPatch(files: ReadonlyMap<string, TreeFile>, patch: string, what: string): FileChange[] {
  const now = new Map<string, TreeFile | null>();
  const first = new Map<string, TreeFile | null>();
  const current = (rel: string) => (now.has(rel) ? now.get(rel)! : (files.get(rel) ?? null));
  for (const section of sections(patch)) {
    const header = section.split("\n").slice(0, 12);
    if (header.some((l) => l.startsWith("rename from ") || l.startsWith("copy from ")))
      throw refuse(what, `a rename or copy (${header[0]}) is not supported; only edits, new files and deletions`);
    if (section.includes("\nGIT binary patch\n") || /^Binary files .* differ$/m.test(section))
      throw refuse(what, `a binary change (${header[0]}) cannot be applied`);
    const parsed = parsePatch(section);
    if (parsed.length !== 1) throw refuse(what, `could not read ${header[0] ?? "a section"} as one file's diff`);
    const p = parsed[0]!;
    const gitNames = /^diff --git a\/(\S+) b\/(\S+)$/.exec(header[0] ?? "");
    const created = header.some((l) => l.startsWith("new file mode ")) || p.oldFileName === "/dev/null";
    const deleted = header.some((l) => l.startsWith("deleted file mode ")) || p.newFileName === "/dev/null";
    const name = deleted ? (p.oldFileName ?? gitNames?.[1]) : (p.newFileName ?? gitNames?.[2]);
    if (name === undefined || name === "/dev/null") throw refuse(what, "a file diff without a file name");
    const rel = relOf(name, what);
    const before = current(rel);
    if (!first.has(rel)) first.set(rel, before);
    if (created && before !== null) throw refuse(what, `${rel} is created by the patch but already exists`);
    if (!created && before === null) throw refuse(what, `${rel} is changed by the patch but does not exist`);
    if (deleted) {
      now.set(rel, null);
      continue;
    }
    const modeLine = header.find((l) => l.startsWith("new file mode ") || l.startsWith("new mode "));
    const exec = modeLine ? modeLine.endsWith("100755") : (before?.exec ?? false);
    const text = before === null ? "" : textOf(before, rel, what);
    const after = p.hunks.length === 0 ? text : applyPatch(text, p);
    if (after === false) throw refuse(what, `a hunk does not apply to ${rel} at the base commit`);
    now.set(rel, { data: Buffer.from(after, "utf8"), exec });
  }
  return [...first].map(([rel, before]) => ({ rel, before, after: now.get(rel) ?? null }));
}
