import path from "node:path";
import picomatch from "picomatch";

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

/**
 * Files that later RUN ON THE HOST, outside every sandbox: git hooks and hook
 * managers (run at the user's next commit), editor tasks, launch and settings
 * files and dev containers (run when the folder is opened), coding-assistant
 * settings, hooks and MCP servers (`.claude/`, `.cursor/`, `.mcp.json`), direnv's
 * `.envrc` (run on `cd`), and the rules files of nested folders, which steer the
 * next assistant like the root ones. A change here is a change to what the user's
 * machine executes, so only an explicit `--writable` naming one lifts it
 * (hostRunLifted); `**` never does.
 */
export const HOST_RUN_FILES: readonly string[] = [
  ".husky/**",
  ".githooks/**",
  ".pre-commit-config.yaml",
  ".pre-commit-hooks.yaml",
  "lefthook.yml",
  ".lefthook.yml",
  "lefthook.yaml",
  ".lefthook.yaml",
  "lefthook-local.yml",
  ".lefthook-local.yml",
  ".lefthook/**",
  ".vscode/**",
  ".devcontainer/**",
  ".devcontainer.json",
  ".idea/**",
  ".claude/**",
  ".cursor/**",
  ".mcp.json",
  "**/.envrc",
  "**/AGENTS.md",
  "**/AGENT.md",
  "**/CLAUDE.md",
  "**/CLAUDE.local.md",
];

export const DEFAULT_PROTECTED: readonly string[] = [
  ".git/**",
  ...LOCK_FILES.map((f) => `**/${f}`),
  ...CI_GLOBS,
  ...DEPENDENCY_DIRS,
  ...RULES_FILES,
  ...HOST_RUN_FILES,
];

/** picomatch's wildcards; a glob without one names a path literally */
const WILDCARD = /[*?[\]{}]|[!+@]\(/;

/**
 * Whether a `--writable` glob names a host-run protection explicitly: the
 * protection's own glob (`.husky/**`), or a literal path it covers
 * (`.vscode/tasks.json`, `docs/AGENTS.md`). A wider glob (`**`, `.vscode/*`)
 * does not: the user must have meant that file.
 */
function namesExplicitly(writable: string, protection: string): boolean {
  if (writable === protection) return true;
  return !WILDCARD.test(writable) && picomatch.isMatch(writable, protection, { dot: true });
}

/** The host-run protections a `--writable` list lifts (see HOST_RUN_FILES). */
export function hostRunLifted(writable: readonly string[]): Set<string> {
  return new Set(HOST_RUN_FILES.filter((p) => writable.some((w) => namesExplicitly(w, p))));
}

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

/**
 * `--writable` replaces the default writable set; `--protect` adds to the protected set; protected wins,
 * except that a host-run protection is lifted by a `--writable` naming it (hostRunLifted). `--protect` still
 * wins over that: the user said both, and keeping a file is the safe reading.
 */
export function pathRules(writable: readonly string[], protect: readonly string[]): PathRules {
  const allowed = (writable.length > 0 ? writable : DEFAULT_WRITABLE).map((g) => g.replace(/^\.\//, ""));
  const lifted = hostRunLifted(allowed);
  const userProtect = protect.map((g) => g.replace(/^\.\//, ""));
  const protectedGlobs = [...new Set([...DEFAULT_PROTECTED.filter((g) => !lifted.has(g)), ...userProtect])];
  const rules = [...new Set(allowed), ...protectedGlobs.map((g) => `!${g}`)];
  return { writable: rules, creatable: rules, protected: protectedGlobs };
}
