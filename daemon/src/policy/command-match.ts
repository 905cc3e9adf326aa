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
  const words = wordsOf(argv);
  for (const word of words) {
    const shell = SHELLS.find((s) => s === basename(word));
    if (shell) return `shell:${shell}`;
  }
  for (const token of tokens) {
    const parts = token.split(" ");
    for (let i = 0; i < words.length; i++) {
      const at = words[i] as string;
      if (at !== parts[0] && basename(at) !== parts[0]) continue;
      let next = 1;
      for (let j = i + 1; j < words.length && next < parts.length; j++) if (words[j] === parts[next]) next++;
      if (next === parts.length) return token;
    }
  }
  return null;
}

/**
 * Every argv element, and after an element that holds spaces or `=` also its
 * pieces: a program hidden inside one element (`env -S 'curl x'`,
 * `--rsh=ssh`, `-c alias.p=push`) is a program all the same.
 */
function wordsOf(argv: readonly string[]): string[] {
  return argv.flatMap((el) => {
    const pieces = el.split(/[\s=]+/).filter((p) => p.length > 0);
    return pieces.length > 1 ? [el, ...pieces] : [el];
  });
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
