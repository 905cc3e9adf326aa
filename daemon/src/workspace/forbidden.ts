import picomatch from "picomatch";

/** true when a normalized workspace-relative path must not be read or written. */
export type Matcher = (rel: string) => boolean;

/**
 * Built-in forbidden-to-read globs: THE list (the README points here, no second
 * copy). A task's `forbidden` list adds to these; it can never remove one. What
 * matches is never listed, read, searched, copied into a sandbox or captured.
 * Folders cover what is beneath them (createForbiddenMatcher tests every prefix);
 * names match in any case and at any depth.
 */
export const BUILTIN_FORBIDDEN: readonly string[] = [
  // version control metadata: remotes with tokens, hooks, objects of forbidden files
  "**/.git",
  "**/.hg",
  "**/.svn",
  // environment files and private keys, keystores and key rings
  "**/.env*",
  "**/*.pem",
  "**/*.key",
  "**/*.p12",
  "**/*.pfx",
  "**/*.keystore",
  "**/*.jks",
  "**/*.asc",
  "**/*.kdbx",
  "**/id_*",
  "**/ssh_host_*_key",
  "**/.ssh",
  "**/.gnupg",
  // credential files of common tools (the login a tool saved in a home folder or a project)
  "**/.git-credentials",
  "**/.netrc",
  "**/_netrc",
  "**/.pgpass",
  "**/.my.cnf",
  "**/.npmrc",
  "**/.yarnrc.yml",
  "**/.pypirc",
  "**/.gem/credentials",
  "**/.cargo/credentials",
  "**/.cargo/credentials.toml",
  "**/.m2/settings.xml",
  "**/.m2/settings-security.xml",
  "**/.gradle/gradle.properties",
  "**/.docker",
  "**/.dockercfg",
  "**/.kube",
  "**/kubeconfig*",
  "**/.aws",
  "**/.azure",
  "**/.config/gcloud",
  "**/.config/gh",
  "**/.config/hub",
  "**/credentials.json",
  "**/application_default_credentials.json",
  "**/.vault-token",
  "**/.htpasswd",
  "**/.s3cfg",
  "**/.boto",
  // terraform: state holds every secret it manages in clear, variable files usually the inputs
  "**/*.tfstate",
  "**/*.tfstate.*",
  "**/*.tfvars",
  "**/*.tfvars.json",
  "**/.terraformrc",
  "**/terraform.rc",
  "**/.terraform.d/credentials.tfrc.json",
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
