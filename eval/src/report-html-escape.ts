/**
 * Text from a report (case ids, reasons, diffs, rule values) goes into the page
 * only through here. Besides the five HTML specials, control characters and
 * Unicode bidi controls are shown as a visible `<U+XXXX>` marker: a diff with a
 * right-to-left override must show the bytes it has, not reorder what a
 * reviewer reads (the "Trojan Source" trick), and a NUL or ESC must not vanish.
 */
const ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

// C0 except tab/newline/CR, DEL and C1, the bidi embeddings/overrides/isolates and marks, line/paragraph separators, BOM
const HIDDEN = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u061C\u200E\u200F\u2028\u2029\u202A-\u202E\u2066-\u2069\uFEFF]/;

export function escapeHtml(text: string): string {
  let out = "";
  for (const ch of text) {
    const entity = ENTITIES[ch];
    if (entity !== undefined) out += entity;
    else if (HIDDEN.test(ch)) out += `&lt;U+${(ch.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, "0")}&gt;`;
    else out += ch;
  }
  return out;
}

/** A rule's expected/observed value as compact JSON text (escaped by the caller). */
export function jsonText(value: unknown): string {
  if (value === undefined) return "-";
  const s = JSON.stringify(value);
  return s === undefined ? String(value) : s;
}
