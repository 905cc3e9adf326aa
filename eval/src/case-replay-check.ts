import path from "node:path";
import { MiniAgentError } from "../../daemon/src/errors.js";
import type { ReplayFile } from "../../daemon/src/contracts/decision.js";
import { ApplyPatchArgs } from "../../daemon/src/contracts/tool-call.js";
import { sha256Hex } from "../../daemon/src/workspace/hash.js";
import { patchText } from "../../daemon/src/tools/patch-text.js";

/**
 * Does the replay still fit repo/? Walks its apply_patch calls in order,
 * keeping for every file each state it could have had so far (its baseline,
 * plus what each earlier patch would produce from a state it quoted). A call
 * whose `version` is none of those states' SHA-256 (or `absent` while the file
 * could be absent) was written against another repo/: the case is refused,
 * naming the call. Calls in `staleCalls` are stale on purpose (the case shows
 * the host refusing them). A call the host would refuse for another reason
 * (bad arguments, a path outside the repo) is not this check's business: the
 * run shows that refusal.
 *
 * `readBaseline(rel)`: the file's repo/ bytes, or null when it is not there.
 */
interface FileState {
  /** what apply_patch's `version` must quote for this state */
  version: string;
  /** the text a patch applies to: null when absent (a create) */
  text: string | null;
  /** a non-UTF-8 file: its version can be quoted, but no patch applies to it */
  binary?: true;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

function stateOf(bytes: Buffer | null): FileState {
  if (bytes === null) return { version: "absent", text: null };
  try {
    return { version: sha256Hex(bytes), text: utf8.decode(bytes) };
  } catch {
    return { version: sha256Hex(bytes), text: null, binary: true };
  }
}

export function checkReplayVersions(replay: ReplayFile, readBaseline: (rel: string) => Buffer | null, staleCalls: ReadonlySet<string>): void {
  const states = new Map<string, FileState[]>();
  const statesOf = (rel: string): FileState[] => {
    let s = states.get(rel);
    if (!s) {
      s = [stateOf(readBaseline(rel))];
      states.set(rel, s);
    }
    return s;
  };
  for (const d of replay.decisions) {
    if (d.kind !== "tool" || d.call.name !== "apply_patch") continue;
    const args = ApplyPatchArgs.safeParse(d.call.arguments);
    if (!args.success) continue;
    const rel = path.posix.normalize(args.data.path);
    if (rel.startsWith("../") || rel === ".." || path.posix.isAbsolute(rel)) continue;
    const possible = statesOf(rel);
    const fitting = possible.filter((s) => s.version === args.data.version);
    if (fitting.length === 0) {
      if (staleCalls.has(d.call.call_id)) continue;
      throw new MiniAgentError(
        "case_replay_mismatch",
        `replay.json call ${d.call.call_id} (apply_patch ${rel}) quotes version ${args.data.version.slice(0, 12)}…, which fits no state ${rel} has had in repo/ or after the replay's earlier patches; re-capture the case, or list the call in expect.json stale_calls if it is stale on purpose`,
        { details: { call_id: d.call.call_id, path: rel, version: args.data.version } },
      );
    }
    for (const before of fitting) {
      if (before.binary) continue;
      const r = patchText(before.text, args.data.old, args.data.new);
      if (!r.ok) continue;
      const version = sha256Hex(r.after);
      if (!possible.some((s) => s.version === version)) possible.push({ version, text: r.after });
    }
  }
}
