/** Quotes an argument for a POSIX shell only when it needs it, so printed commands can be pasted. */
export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_./:=@+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * C0/C1 controls (terminal escapes, CR, BEL, line breaks) and the Unicode
 * marks that reorder or split what a terminal shows (U+202E, isolates, line
 * separators). Tab is kept: it moves the cursor only forward, within the line.
 */
const UNSAFE = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const UNSAFE_BUT_NEWLINE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

function escapeUnsafe(c: string): string {
  const n = c.charCodeAt(0);
  return n <= 0xff ? `\\x${n.toString(16).padStart(2, "0")}` : `\\u${n.toString(16).padStart(4, "0")}`;
}

/**
 * The one terminal-safe form of text that came from a repository, a case or a
 * model (a path, a case folder's name, an error that quotes them, a model's
 * reason): each unsafe character shown as `\xNN` / `\uNNNN`, so nothing printed
 * can move the cursor, retitle the window, ring the bell or hide part of a
 * line. `lines: true` keeps line breaks (a message of several lines, a diff);
 * otherwise the text stays on one line.
 */
export function termSafe(text: string, opts: { lines?: boolean } = {}): string {
  return text.replace(opts.lines ? UNSAFE_BUT_NEWLINE : UNSAFE, escapeUnsafe);
}

/**
 * A proposed command (argv written by the model) as one line a person can read
 * safely on a terminal and paste into a shell: each word quoted when needed;
 * a word holding control or reordering characters is shown as `$'...'` with
 * those characters escaped, so it can never move the cursor, clear the screen
 * or hide part of itself.
 */
export function quoteArgv(argv: readonly string[]): string {
  return argv
    .map((w) => {
      const safe = termSafe(w);
      if (safe === w && !w.includes("\t")) return shellQuote(w);
      return `$'${termSafe(w.replace(/[\\']/g, (c) => `\\${c}`)).replace(/\t/g, "\\t")}'`;
    })
    .join(" ");
}
