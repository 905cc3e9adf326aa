import path from "node:path";
import { npmCommand } from "./npm-commands.js";

/**
 * The words a deny token is matched against: each argv element, its pieces
 * (split at spaces and `=`), and each word's canonical spellings, so an
 * option written another way is the same option (issue: `rm -fr /`,
 * `python3 -mpip install`, `npm isntall`, `chmod 0777` evaded their tokens).
 * A token is canonicalised by the same rules (tokenWords), so a person's own
 * `rm -fr dist` or `npm i` means what npm and rm would read.
 *
 * Normalising only ADDS words (the spelling written is kept beside its
 * canonical forms): it can make a deny hit, never make one miss. It is a
 * convenience over a sandbox that has no network, never the boundary.
 */
type Program = "python" | "npm" | "rm" | "chmod" | null;

/** The last path segment: `/usr/bin/curl` and `curl` are the same program. */
export function basename(word: string): string {
  const i = word.lastIndexOf("/");
  return i === -1 ? word : word.slice(i + 1);
}

function programOf(word: string): Program {
  const b = basename(word);
  if (/^python(\d+(\.\d+)*)?$/.test(b)) return "python";
  return b === "npm" || b === "rm" || b === "chmod" ? b : null;
}

/** python's one-letter options that take a value: the rest of the word is it (`-mpip` is `-m pip`, `-Impip` is `-I -m pip`) */
const PYTHON_VALUE_OPTIONS = "cmWX";
/** rm's other spellings of -r and -f (GNU coreutils) */
const RM_ALIASES: Readonly<Record<string, string>> = { "-R": "-r", "--recursive": "-r", "--force": "-f" };

function alias(word: string, program: Program): string {
  return program === "rm" ? (RM_ALIASES[word] ?? word) : word;
}

/** The word's canonical spellings in the context of `program`; empty when it has none other than itself. */
function canonical(word: string, program: Program): string[] {
  if (program === "python" && /^-[A-Za-z]./.test(word)) {
    const out: string[] = [];
    for (let i = 1; i < word.length; i++) {
      const c = word[i] as string;
      out.push(`-${c}`);
      if (PYTHON_VALUE_OPTIONS.includes(c)) {
        if (i + 1 < word.length) out.push(word.slice(i + 1));
        break;
      }
    }
    return out;
  }
  // joined short options: `-fr` is `-f -r`
  if (/^-[A-Za-z]{2,}$/.test(word)) return [...word.slice(1)].map((c) => alias(`-${c}`, program));
  const aliased = alias(word, program);
  if (aliased !== word) return [aliased];
  const mode = program === "chmod" ? chmodMode(word) : null;
  if (mode !== null) return mode !== word ? [mode] : [];
  // every word after npm, not only the first: npm's options may take a value as the next word
  const cmd = program === "npm" && !word.startsWith("-") ? npmCommand(word) : null;
  if (cmd !== null) return cmd !== word ? [cmd] : [];
  if (word.startsWith("/")) {
    const n = path.posix.normalize(word).replace(/(.)\/+$/, "$1");
    return n !== word ? [n] : [];
  }
  return [];
}

/**
 * A chmod mode as three octal digits of its permission bits (`0777`, `1777`
 * -> `777`), and a symbolic mode that gives r, w and x to user, group and
 * others (`a+rwx`, `u=rwx,go+rwx`) as `777`; null for anything else.
 */
function chmodMode(word: string): string | null {
  if (/^[0-7]{1,5}$/.test(word)) return (Number.parseInt(word, 8) & 0o777).toString(8).padStart(3, "0");
  const granted: Record<string, Set<string>> = { u: new Set(), g: new Set(), o: new Set() };
  for (const clause of word.split(",")) {
    const m = /^([ugoa]*)([+=])([rwxXst]*)$/.exec(clause);
    if (m === null) return null;
    const who = m[1] === "" || (m[1] as string).includes("a") ? "ugo" : (m[1] as string);
    for (const w of who) for (const p of m[3] as string) granted[w]?.add(p);
  }
  return ["u", "g", "o"].every((w) => ["r", "w", "x"].every((p) => granted[w]?.has(p))) ? "777" : null;
}

/** Every word of an argv, with its pieces and canonical spellings (in argv order; a word's forms stay together). */
export function argvWords(argv: readonly string[]): string[] {
  const out: string[] = [];
  let program: Program = null;
  for (const el of argv) {
    const pieces = el.split(/[\s=]+/).filter((p) => p.length > 0);
    for (const w of pieces.length > 1 ? [el, ...pieces] : [el]) out.push(w, ...canonical(w, program));
    program = programOf(el) ?? program;
  }
  return out;
}

/** A deny token's words, canonical: `rm -rf /` -> rm -r -f /, `npm i` -> npm install. */
export function tokenWords(token: string): string[] {
  const out: string[] = [];
  let program: Program = null;
  for (const w of token.split(" ")) {
    const c = canonical(w, program);
    out.push(...(c.length > 0 ? c : [w]));
    program = programOf(w) ?? program;
  }
  return out;
}
