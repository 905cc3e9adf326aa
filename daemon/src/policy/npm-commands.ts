/**
 * npm's own command table (npm 10, `lib/utils/cmd-list.js`): the commands, the
 * aliases and typos npm accepts for them, and npm's rule for reading a command
 * word (camelCase to kebab-case, exact name, alias, then any unambiguous
 * abbreviation of a name or alias). Deny tokens compare the command npm would
 * run, so `npm isntall`, `npm add`, `npm insta` and `npm installTest` are the
 * installs they are (policy/command-words.ts).
 */
// biome-ignore format: one table, kept dense as npm keeps it
const COMMANDS: readonly string[] = [
  "access", "adduser", "audit", "bugs", "cache", "ci", "completion", "config", "dedupe", "deprecate", "diff", "dist-tag",
  "docs", "doctor", "edit", "exec", "explain", "explore", "find-dupes", "fund", "get", "help", "help-search", "init",
  "install", "install-ci-test", "install-test", "link", "ll", "login", "logout", "ls", "org", "outdated", "owner", "pack",
  "ping", "pkg", "prefix", "profile", "prune", "publish", "query", "rebuild", "repo", "restart", "root", "run-script",
  "sbom", "search", "set", "shrinkwrap", "star", "stars", "start", "stop", "team", "test", "token", "uninstall",
  "unpublish", "unstar", "update", "version", "view", "whoami",
];

// biome-ignore format: one table, kept dense as npm keeps it
const ALIASES: Readonly<Record<string, string>> = {
  author: "owner", home: "docs", issues: "bugs", info: "view", show: "view", find: "search", add: "install",
  unlink: "uninstall", remove: "uninstall", rm: "uninstall", r: "uninstall", un: "uninstall", rb: "rebuild", list: "ls",
  ln: "link", create: "init", i: "install", it: "install-test", cit: "install-ci-test", up: "update", c: "config",
  s: "search", se: "search", tst: "test", t: "test", ddp: "dedupe", v: "view", run: "run-script",
  "clean-install": "ci", "clean-install-test": "install-ci-test", x: "exec", why: "explain", la: "ll", verison: "version",
  ic: "ci", innit: "init", in: "install", ins: "install", inst: "install", insta: "install", instal: "install",
  isnt: "install", isnta: "install", isntal: "install", isntall: "install", "install-clean": "ci", "isntall-clean": "ci",
  hlep: "help", "dist-tags": "dist-tag", upgrade: "update", udpate: "update", rum: "run-script", sit: "install-ci-test",
  urn: "run-script", ogr: "org", "add-user": "adduser",
};

const NAMES: readonly string[] = [...COMMANDS, ...Object.keys(ALIASES)];

/** The npm command a word names, as npm itself reads it; null when it names none (or several, by abbreviation). */
export function npmCommand(word: string): string | null {
  const c = /[A-Z]/.test(word) ? word.replace(/[A-Z]/g, (m) => `-${m.toLowerCase()}`) : word;
  if (COMMANDS.includes(c)) return c;
  if (Object.hasOwn(ALIASES, c)) return ALIASES[c] as string;
  const matches = NAMES.filter((n) => n.startsWith(c));
  if (c.length === 0 || matches.length !== 1) return null;
  let a = matches[0] as string;
  while (Object.hasOwn(ALIASES, a)) a = ALIASES[a] as string;
  return a;
}
