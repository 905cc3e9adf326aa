import type { ReplayFile } from "../../../daemon/src/contracts/decision.js";
import { MiniAgentError } from "../../../daemon/src/errors.js";
import { patchText } from "../../../daemon/src/tools/patch-text.js";
import { sha256Hex } from "../../../daemon/src/workspace/hash.js";
import type { FileChange } from "./git-patch.js";

/**
 * The gold patch as a replay: the "model" writes each changed file's
 * post-patch content through apply_patch, the one write tool, then ends. Each
 * call replaces the smallest run of whole lines that covers every change in
 * the file and occurs exactly once in it (apply_patch's rule), so a replay of
 * a one-line fix in a 3,000-line file stays one line, and every call is
 * checked here against the host's own patch rule (tools/patch-text.ts) before
 * the case is written.
 */

/** apply_patch's own bounds (contracts/tool-call.ts ApplyPatchArgs). */
const ARG_MAX_CHARS = 65_536;

function count(haystack: string, needle: string): number {
  let n = 0;
  for (let i = haystack.indexOf(needle); i !== -1; i = haystack.indexOf(needle, i + 1)) n++;
  return n;
}

/** The replaced region [start, endB) of `b` and its counterpart [start, endA) of `a`, whole lines, unique in `b`. */
export function editRegion(b: string, a: string): { old: string; new: string } | null {
  let p = 0;
  while (p < b.length && p < a.length && b[p] === a[p]) p++;
  let s = 0;
  while (s < b.length - p && s < a.length - p && b[b.length - 1 - s] === a[a.length - 1 - s]) s++;
  let start = p === 0 ? 0 : b.lastIndexOf("\n", p - 1) + 1;
  let endB = b.length - s;
  const toLineEnd = (i: number) => {
    const nl = b.indexOf("\n", i);
    return nl === -1 ? b.length : nl + 1;
  };
  // a change ends at its last changed line's end; a pure insertion takes the line it lands before
  endB = endB > p ? toLineEnd(endB - 1) : toLineEnd(p);
  for (;;) {
    const old = b.slice(start, endB);
    if (old !== "" && count(b, old) === 1) return { old, new: a.slice(start, a.length - (b.length - endB)) };
    if (start === 0 && endB === b.length) return null;
    if (start > 0) start = start >= 2 ? b.lastIndexOf("\n", start - 2) + 1 : 0;
    if (endB < b.length) endB = toLineEnd(endB);
  }
}

const refuse = (message: string) => new MiniAgentError("invalid_fields", `patch: ${message}`);

export function goldReplay(changes: readonly FileChange[], instanceId: string): ReplayFile {
  const calls: ReplayFile["decisions"] = [];
  for (const [i, c] of changes.entries()) {
    if (c.after === null) throw refuse(`${c.rel} is deleted; apply_patch, the only write tool, cannot delete a file`);
    const after = c.after.data.toString("utf8");
    const before = c.before === null ? null : c.before.data.toString("utf8");
    if (before !== null && before === after) continue; // a mode-only change: nothing to write
    const region = before === null ? { old: "", new: after } : editRegion(before, after);
    if (region === null) throw refuse(`${c.rel} is empty at the base commit; apply_patch cannot edit an empty file`);
    if (region.old.length > ARG_MAX_CHARS || region.new.length > ARG_MAX_CHARS)
      throw refuse(`the change to ${c.rel} spans more than ${ARG_MAX_CHARS} characters, more than one apply_patch call may carry`);
    // the host's own rule decides: a call it would refuse is never written into a case
    const applied = patchText(before, region.old, region.new);
    if (!applied.ok || applied.after !== after)
      throw refuse(`the change to ${c.rel} cannot be written as one apply_patch call (${applied.ok ? "different result" : applied.code})`);
    calls.push({
      kind: "tool",
      call: {
        call_id: `call_${String(i + 1).padStart(2, "0")}_gold`,
        name: "apply_patch",
        arguments: { path: c.rel, version: c.before === null ? "absent" : sha256Hex(c.before.data), old: region.old, new: region.new },
      },
    });
  }
  return {
    schema_version: 1,
    decisions: [
      { kind: "plan", text: `Apply the reference patch of ${instanceId}, file by file.` },
      ...calls,
      { kind: "final", text: `Applied the reference patch of ${instanceId}.` },
    ],
  };
}
