/**
 * apply_patch's text semantics, pure: old -> new on a file's text (or a new
 * file's content when there is none). tools/apply-patch.ts uses it for every
 * write, and the eval case loader (eval/src/case-replay-check.ts) walks a
 * replay's patches with it, so a case is judged by the same rule the host
 * applies, never by a second copy.
 */
export type PatchTextOutcome = { ok: true; after: string } | { ok: false; code: "invalid_fields" | "no_match" | "non_unique_match" | "no_op"; count?: number };

function countOccurrences(haystack: string, needle: string): number {
  let n = 0;
  // overlapping matches count too: "aa" in "aaa" is ambiguous, not unique
  for (let i = haystack.indexOf(needle); i !== -1; i = haystack.indexOf(needle, i + 1)) n++;
  return n;
}

/** `before` null: the file does not exist and is created with `replacement` (old must be empty). */
export function patchText(before: string | null, old: string, replacement: string): PatchTextOutcome {
  if (before === null) return old === "" ? { ok: true, after: replacement } : { ok: false, code: "invalid_fields" };
  if (old === "") return { ok: false, code: "invalid_fields" };
  const n = countOccurrences(before, old);
  if (n === 0) return { ok: false, code: "no_match" };
  if (n > 1) return { ok: false, code: "non_unique_match", count: n };
  const i = before.indexOf(old);
  const after = before.slice(0, i) + replacement + before.slice(i + old.length);
  if (after === before) return { ok: false, code: "no_op" };
  return { ok: true, after };
}
