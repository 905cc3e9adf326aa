import path from "node:path";

/**
 * What an ad-hoc task may change. Default: every file that is not forbidden
 * and not protected. Protected paths are written into the spec as `!GLOB`
 * entries of `writable` and `creatable`; workspace/forbidden.ts `globMatcher`
 * reads `!` as an exclusion that beats every other glob, so the policy, the
 * tools and the Verifier all see the same rule and a printed spec says it.
 */

/** Lock files: pinned dependency graphs a fix must not rewrite behind the user's back. */
const LOCK_FILES = [
  "package-lock.json",
  "npm-shrinkwrap.json",
  "yarn.lock",
  "pnpm-lock.yaml",
  "bun.lockb",
  "poetry.lock",
  "Pipfile.lock",
  "uv.lock",
  "pdm.lock",
  "go.sum",
  "go.work.sum",
  "Cargo.lock",
  "Gemfile.lock",
  "composer.lock",
  "mix.lock",
];

/** CI configuration: what decides whether the user's project is green must stay theirs. */
const CI_GLOBS = [
  ".github/**",
  ".gitlab-ci.yml",
  ".gitlab/**",
  ".ci/**",
  ".circleci/**",
  ".buildkite/**",
  ".travis.yml",
  "azure-pipelines.yml",
  "Jenkinsfile",
  ".woodpecker.yml",
  ".woodpecker/**",
  "bitbucket-pipelines.yml",
];

/** Installed dependencies: a fix belongs in the project's code, not in a copy of someone else's. */
const DEPENDENCY_DIRS = ["**/node_modules/**", ".venv/**"];

/**
 * The project's rules files (given to the model as untrusted project data) and
 * the workspace's own policy file (`.mini-agent/policy.json`, which tightens the
 * next run's policy): the model never edits what steers it or a later run.
 */
const RULES_FILES = ["AGENTS.md", "AGENT.md", "CLAUDE.md", ".cursorrules", ".mini-agent/**"];

export const DEFAULT_PROTECTED: readonly string[] = [".git/**", ...LOCK_FILES.map((f) => `**/${f}`), ...CI_GLOBS, ...DEPENDENCY_DIRS, ...RULES_FILES];

export const DEFAULT_WRITABLE: readonly string[] = ["**"];

/**
 * Seconds a test command may take, per family. Go compiles the packages first,
 * with a build cache in /tmp that a warm sandbox empties after every command,
 * so a cold build is the normal case there; a tool call gets as long.
 */
export const TEST_TIMEOUT_SECONDS = { node: 120, python: 120, go: 300 } as const;

/**
 * Why a user glob is refused, or null. Globs are workspace-relative picomatch
 * globs: one that is absolute, climbs with `..` or starts at `~` would name
 * something outside the workspace.
 */
export function globEscapes(glob: string): string | null {
  if (glob.trim() === "") return "an empty glob";
  if (glob.includes("\0")) return "a glob with a NUL character";
  if (glob.startsWith("!")) return `${glob}: use --protect GLOB to exclude paths, not a ! glob`;
  if (path.isAbsolute(glob) || glob.startsWith("~")) return `${glob} is not relative to the workspace`;
  if (glob.includes("\\")) return `${glob}: use / as the separator`;
  if (glob.split("/").includes("..")) return `${glob} climbs out of the workspace (..)`;
  return null;
}

export interface PathRules {
  writable: string[];
  creatable: string[];
  protected: string[];
}

/** `--writable` replaces the default writable set; `--protect` adds to the protected set; protected wins. */
export function pathRules(writable: readonly string[], protect: readonly string[]): PathRules {
  const protectedGlobs = [...new Set([...DEFAULT_PROTECTED, ...protect.map((g) => g.replace(/^\.\//, ""))])];
  const allowed = (writable.length > 0 ? writable : DEFAULT_WRITABLE).map((g) => g.replace(/^\.\//, ""));
  const rules = [...new Set(allowed), ...protectedGlobs.map((g) => `!${g}`)];
  return { writable: rules, creatable: rules, protected: protectedGlobs };
}
