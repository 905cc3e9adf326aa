/** Quotes an argument for a POSIX shell only when it needs it, so printed commands can be pasted. */
export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_./:=@+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

// C0/C1 controls (terminal escapes, line breaks) and the Unicode marks that reorder or split what a terminal shows
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

function escapeUnsafe(c: string): string {
  const n = c.charCodeAt(0);
  return n <= 0xff ? `\\x${n.toString(16).padStart(2, "0")}` : `\\u${n.toString(16).padStart(4, "0")}`;
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
      UNSAFE.lastIndex = 0;
      if (!UNSAFE.test(w)) return shellQuote(w);
      return `$'${w.replace(/[\\']/g, (c) => `\\${c}`).replace(UNSAFE, escapeUnsafe)}'`;
    })
    .join(" ");
}
