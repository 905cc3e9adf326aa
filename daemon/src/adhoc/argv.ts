/**
 * `--test "CMD ARG..."` as an argv, split the way a POSIX shell splits words
 * (quotes, backslashes) but never through a shell: the sandbox has none, and
 * the daemon runs nothing from the repository. Anything a shell would have
 * done MORE than split (operators, expansions, redirections, env assignments)
 * is refused with the character that needs it, never silently passed on.
 */

/** One word; `glob` when it holds an unquoted `*`, `?` or `[` (a shell would have expanded it). */
export interface Word {
  text: string;
  glob: boolean;
}

export type SplitResult = { ok: true; words: Word[] } | { ok: false; reason: string };

const OPERATORS = new Set(["|", "&", ";", "<", ">", "(", ")", "`", "$"]);
const GLOB_CHARS = new Set(["*", "?", "["]);

export function splitWords(text: string): SplitResult {
  const words: Word[] = [];
  let cur: Word | null = null;
  const push = (ch: string, glob = false) => {
    cur ??= { text: "", glob: false };
    cur.text += ch;
    if (glob) cur.glob = true;
  };
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === " " || ch === "\t" || ch === "\n") {
      if (cur) words.push(cur);
      cur = null;
      i++;
    } else if (ch === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) return { ok: false, reason: "an unterminated ' quote" };
      push(text.slice(i + 1, end));
      i = end + 1;
    } else if (ch === '"') {
      i++;
      let closed = false;
      while (i < text.length) {
        const c = text[i]!;
        if (c === '"') {
          closed = true;
          i++;
          break;
        }
        if (c === "$" || c === "`") return { ok: false, reason: `shell expansion (${c}) inside double quotes; there is no shell in the sandbox` };
        if (c === "\\" && i + 1 < text.length && '"\\$`'.includes(text[i + 1]!)) {
          push(text[i + 1]!);
          i += 2;
          continue;
        }
        push(c);
        i++;
      }
      if (!closed) return { ok: false, reason: 'an unterminated " quote' };
    } else if (ch === "\\") {
      if (i + 1 >= text.length) return { ok: false, reason: "a trailing backslash" };
      push(text[i + 1]!);
      i += 2;
    } else if (OPERATORS.has(ch)) {
      return { ok: false, reason: `the shell operator or expansion ${JSON.stringify(ch)}; there is no shell in the sandbox, give one plain command` };
    } else if (cur === null && (ch === "#" || ch === "~")) {
      return { ok: false, reason: ch === "#" ? "a shell comment (#)" : "a ~ home-folder expansion" };
    } else {
      push(ch, GLOB_CHARS.has(ch));
      i++;
    }
  }
  if (cur) words.push(cur);
  const first = words[0];
  if (first && /^[A-Za-z_][A-Za-z0-9_]*=/.test(first.text)) {
    return { ok: false, reason: `an environment assignment (${first.text.split("=")[0]}=...); the sandbox's environment is fixed` };
  }
  return { ok: true, words };
}
