import type { TaskSpec } from "../contracts/task-spec.js";
import { globMatcher } from "../workspace/forbidden.js";
import { changedPaths, type Manifest } from "../workspace/manifest.js";

/**
 * Which changes since the baseline the task did NOT allow. Every path that is
 * not writable is protected (issue 4: e.g. notes.txt, the user's unfinished
 * work). A path may be modified or removed only when it is writable; it may be
 * ADDED when it is writable or creatable. Symlinks and other special entries
 * are never something the tools can produce, so any change involving one is
 * reported whatever the globs say.
 */
export function protectedChanges(task: Pick<TaskSpec, "writable" | "creatable">, baseline: Manifest, current: Manifest): string[] {
  const writable = globMatcher(task.writable);
  const creatable = globMatcher(task.creatable);
  const out: string[] = [];
  for (const rel of changedPaths(baseline, current)) {
    const special = rel in baseline.special || rel in current.special;
    const existed = rel in baseline.files;
    const allowed = !special && (writable(rel) || (!existed && creatable(rel)));
    if (!allowed) out.push(rel);
  }
  return out;
}
