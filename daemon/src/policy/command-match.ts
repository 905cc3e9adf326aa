import { matchesShape } from "./argv-shape.js";
import { argvWords, basename, tokenWords } from "./command-words.js";
import { SHELLS } from "./defaults.js";

export { basename };

/**
 * The first deny token this argv hits, or null. Both sides are normalised
 * first (command-words.ts: joined short options, python's `-mpip`, npm's
 * aliases and typos, chmod modes, `//` for `/`). A one-word token hits when
 * any word, or its basename, equals it (`curl`, `/usr/bin/curl`, `env curl`,
 * `npx curl`). A token of several words hits when its first word hits a word,
 * each of its options (`-r`) appears after it in any order, and each other word
 * appears after it in order (`git push` hits `git -C repo push origin`). A `*`
 * in a token word matches any characters (`go run *@*`). A shell program always
 * hits: commands are argv, never a shell string.
 */
export function denyTokenHit(argv: readonly string[], tokens: readonly string[]): string | null {
  const words = argvWords(argv);
  for (const word of words) {
    const shell = SHELLS.find((s) => s === basename(word));
    if (shell) return `shell:${shell}`;
  }
  for (const token of tokens) {
    const [first, ...rest] = tokenWords(token) as [string, ...string[]];
    const options = rest.filter((p) => p.startsWith("-"));
    const operands = rest.filter((p) => !p.startsWith("-"));
    for (let i = 0; i < words.length; i++) {
      const at = words[i] as string;
      if (!wordMatches(first, at) && !wordMatches(first, basename(at))) continue;
      const after = words.slice(i + 1);
      if (!options.every((o) => after.some((w) => wordMatches(o, w)))) continue;
      let next = 0;
      for (const w of after) if (next < operands.length && wordMatches(operands[next] as string, w)) next++;
      if (next === operands.length) return token;
    }
  }
  return null;
}

function wordMatches(pattern: string, word: string): boolean {
  if (!pattern.includes("*")) return pattern === word;
  const re = new RegExp(
    `^${pattern
      .split("*")
      .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
      .join(".*")}$`,
  );
  return re.test(word);
}

/**
 * The first allow entry that describes this WHOLE argv (argv-shape.ts), or
 * null. The program is compared exactly (never by basename): `./npm run lint`
 * is a file the model may have written, not the `npm` the allowlist means.
 */
export function allowShapeHit(argv: readonly string[], shapes: readonly (readonly string[])[]): readonly string[] | null {
  return shapes.find((shape) => matchesShape(argv, shape)) ?? null;
}
