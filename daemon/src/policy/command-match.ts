import { SHELLS } from "./defaults.js";

/** The last path segment: `/usr/bin/curl` and `curl` are the same program. */
export function basename(word: string): string {
  const i = word.lastIndexOf("/");
  return i === -1 ? word : word.slice(i + 1);
}

/**
 * The first deny token this argv hits, or null. A one-word token hits when any
 * argv element, or its basename, equals it (`curl`, `/usr/bin/curl`, `env
 * curl`, `npx curl`). A token of several words hits when its first word hits
 * an element and each following word appears after it, in order (`git push`
 * hits `git -C repo push origin`). A shell program always hits: commands are
 * argv, never a shell string.
 */
export function denyTokenHit(argv: readonly string[], tokens: readonly string[]): string | null {
  for (const word of argv) {
    const shell = SHELLS.find((s) => s === basename(word));
    if (shell) return `shell:${shell}`;
  }
  for (const token of tokens) {
    const words = token.split(" ");
    for (let i = 0; i < argv.length; i++) {
      const at = argv[i] as string;
      if (at !== words[0] && basename(at) !== words[0]) continue;
      let next = 1;
      for (let j = i + 1; j < argv.length && next < words.length; j++) if (argv[j] === words[next]) next++;
      if (next === words.length) return token;
    }
  }
  return null;
}

/**
 * The first allowlisted prefix argv starts with, word for word, or null. The
 * program is compared exactly (never by basename): `./npm run lint` is a file
 * the model may have written, not the `npm` the allowlist means.
 */
export function allowPrefixHit(argv: readonly string[], prefixes: readonly (readonly string[])[]): readonly string[] | null {
  for (const prefix of prefixes) {
    if (prefix.length <= argv.length && prefix.every((w, i) => argv[i] === w)) return prefix;
  }
  return null;
}
