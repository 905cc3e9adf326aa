/**
 * Folders that hold a project's installed dependencies rather than its own
 * code, named once for every part that must treat them differently (the size
 * check's hint today; the read-only dependency layers that keep them out of
 * the per-run copy). A name matches at any depth.
 */
export const DEPENDENCY_DIRS = ["node_modules", ".venv", "venv", "vendor"] as const;

const NAMES: ReadonlySet<string> = new Set(DEPENDENCY_DIRS);

/** Whether a folder's own name (not its path) is a dependency folder's. */
export function isDependencyDirName(name: string): boolean {
  return NAMES.has(name);
}
