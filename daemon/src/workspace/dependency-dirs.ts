import fs from "node:fs";
import path from "node:path";

/**
 * The folders at a workspace's root that hold a project's installed
 * dependencies: the environment a project runs in, not the project. They are
 * never copied per run (a 157 MB node_modules does not fit the workspace
 * tmpfs), never kept in a baseline, never written by a tool; container runs
 * get them as a read-only dependency layer (sandbox/dependency-layer.ts).
 * `vendor` is Go's only beside a go.mod: elsewhere it is often the project's
 * own code.
 */
export const DEPENDENCY_DIRS = ["node_modules", ".venv", "venv", "vendor"] as const;
export type DependencyDir = (typeof DEPENDENCY_DIRS)[number];

/** The lock files that say what a dependency folder was installed from: part of its layer's key. */
export const LOCK_FILES: Record<DependencyDir, readonly string[]> = {
  node_modules: ["package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml"],
  ".venv": ["poetry.lock", "uv.lock", "Pipfile.lock", "requirements.txt", "requirements-dev.txt", "requirements-test.txt"],
  venv: ["poetry.lock", "uv.lock", "Pipfile.lock", "requirements.txt", "requirements-dev.txt", "requirements-test.txt"],
  vendor: ["go.sum", "go.mod"],
};

/**
 * What an install in the install sandbox is made from, per folder it makes: the
 * files that say what to install (at least one of `needs` must exist). A
 * workspace whose folder an install made is matched to that layer by these
 * files alone, so later runs find it without the folder on disk.
 */
export const INSTALL_INPUTS = {
  node_modules: { needs: ["package.json"], also: LOCK_FILES.node_modules },
  ".venv": {
    needs: ["requirements.txt", "requirements-dev.txt", "requirements-test.txt", "pyproject.toml", "setup.py", "setup.cfg"],
    also: ["poetry.lock", "uv.lock", "Pipfile.lock"],
  },
  vendor: { needs: ["go.mod"], also: ["go.sum"] },
} as const satisfies Partial<Record<DependencyDir, { needs: readonly string[]; also: readonly string[] }>>;
export type InstalledDir = keyof typeof INSTALL_INPUTS;

function isRealDir(abs: string): boolean {
  try {
    return fs.lstatSync(abs).isDirectory();
  } catch {
    return false;
  }
}

/** The dependency folders present at `root` (real folders, never a symlink), in list order. */
export function findDependencyDirs(root: string): DependencyDir[] {
  return DEPENDENCY_DIRS.filter((d) => isRealDir(path.join(root, d)) && (d !== "vendor" || fs.existsSync(path.join(root, "go.mod"))));
}

/**
 * A walk's skip rule for one workspace: true for a dependency folder at the
 * root (and so for everything beneath it). Decided once per walk, so one walk
 * never disagrees with itself about `vendor`.
 */
export function dependencySkip(root: string): (rel: string) => boolean {
  const dirs = new Set<string>(findDependencyDirs(root));
  if (dirs.size === 0) return () => false;
  return (rel) => dirs.has(rel.split("/", 1)[0]!);
}

/** Is this workspace-relative path inside a dependency folder's name (whatever exists on disk)? For the write rule. */
export function isDependencyPath(rel: string, hasGoMod: boolean): boolean {
  const top = rel.split("/", 1)[0]!;
  return (DEPENDENCY_DIRS as readonly string[]).includes(top) && (top !== "vendor" || hasGoMod);
}

const NAMES: ReadonlySet<string> = new Set(DEPENDENCY_DIRS);

/** Whether a folder's own name (not its path) is a dependency folder's (the size check's hint names any depth). */
export function isDependencyDirName(name: string): boolean {
  return NAMES.has(name);
}
