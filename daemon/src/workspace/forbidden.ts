import picomatch from "picomatch";

/** true when a normalized workspace-relative path must not be read or written. */
export type Matcher = (rel: string) => boolean;

/**
 * Built-in forbidden-to-read globs (issue 3: .git/, .env*, *.pem, *.key, id_* and
 * the like). A task's `forbidden` list adds to these; it can never remove one.
 */
export const BUILTIN_FORBIDDEN: readonly string[] = [
  "**/.git",
  "**/.hg",
  "**/.svn",
  "**/.env*",
  "**/*.pem",
  "**/*.key",
  "**/*.p12",
  "**/*.pfx",
  "**/*.keystore",
  "**/id_*",
  "**/.ssh",
  "**/.aws",
  "**/.gnupg",
  "**/.netrc",
  "**/.npmrc",
  "**/.pypirc",
  "**/.docker",
  "**/.kube",
];

/**
 * Every PREFIX of the path is tested, so a forbidden folder (`.git`) also
 * covers everything beneath it without needing a `/**` twin for each glob.
 */
export function createForbiddenMatcher(extra: readonly string[] = []): Matcher {
  const isMatch = picomatch([...BUILTIN_FORBIDDEN, ...extra], { dot: true, nocase: true });
  return (rel: string) => {
    const parts = rel.split("/");
    for (let i = 1; i <= parts.length; i++) {
      if (isMatch(parts.slice(0, i).join("/"))) return true;
    }
    return false;
  };
}

/**
 * A glob list as a matcher over normalized relative paths (writable, creatable).
 * A glob starting with `!` EXCLUDES what it matches, whatever the other globs
 * say (`**` with `!.git/**` and `!go.sum`: everything but those), so
 * a protected path always wins over a broad writable glob. picomatch alone would
 * OR a negated glob in, making `!x` match everything but x: the opposite.
 */
export function globMatcher(globs: readonly string[]): Matcher {
  const include = globs.filter((g) => !g.startsWith("!"));
  const exclude = globs.filter((g) => g.startsWith("!")).map((g) => g.slice(1));
  if (include.length === 0) return () => false;
  const isMatch = picomatch(include, { dot: true });
  if (exclude.length === 0) return (rel: string) => isMatch(rel);
  const isExcluded = picomatch(exclude, { dot: true });
  return (rel: string) => isMatch(rel) && !isExcluded(rel);
}
