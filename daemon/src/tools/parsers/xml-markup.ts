/**
 * Two small lexical checks the XML library does not give us. They never
 * interpret the document's structure (fast-xml-parser does that):
 * - markup declarations (`<!DOCTYPE`, `<!ENTITY`, ...) anywhere outside comments
 *   and CDATA sections: fast-xml-parser reads a DOCTYPE wherever it meets one,
 *   and a report has no use for a DTD, so any declaration is refused;
 * - whether the root element is ever closed, and what follows it: a report cut
 *   by a crash or a full disk never closes its root (truncated), text after
 *   the root is something else (unparsable). Tags are only counted here, not
 *   matched: a mismatched tag is the validator's to report.
 */
export interface MarkupScan {
  /** a `<!...` that is neither a comment nor a CDATA section */
  declaration: boolean;
  /** the first element's name, or null when there is none */
  root: string | null;
  /** index just past the tag that closes the root element; -1 when it never closes */
  rootEnd: number;
  /** start tags, attributes (`=` outside quotes) and the deepest nesting: the parser's work, known before it starts */
  elements: number;
  attributes: number;
  maxDepth: number;
  /** the longest quoted attribute value, in characters */
  longestAttribute: number;
}

/** Index just past the `>` that ends the tag opened at `start`, skipping quoted attribute values; -1 if none. */
function tagEnd(xml: string, start: number, scan: MarkupScan): number {
  let quote: string | null = null;
  let opened = 0;
  for (let i = start + 1; i < xml.length; i++) {
    const c = xml[i];
    if (quote !== null) {
      if (c === quote) {
        quote = null;
        if (i - opened - 1 > scan.longestAttribute) scan.longestAttribute = i - opened - 1;
      }
    } else if (c === '"' || c === "'") {
      quote = c;
      opened = i;
    } else if (c === "=") scan.attributes++;
    else if (c === ">") return i + 1;
  }
  return -1;
}

function nameAt(xml: string, start: number): string {
  let end = start;
  while (end < xml.length && !" \t\r\n/>".includes(xml[end] as string)) end++;
  return xml.slice(start, end);
}

export function scanMarkup(xml: string): MarkupScan {
  const scan: MarkupScan = { declaration: false, root: null, rootEnd: -1, elements: 0, attributes: 0, maxDepth: 0, longestAttribute: 0 };
  let depth = 0;
  let i = 0;
  while (i < xml.length) {
    const lt = xml.indexOf("<", i);
    if (lt === -1) break;
    let next: number;
    if (xml.startsWith("<!--", lt)) next = endAfter(xml, "-->", lt + 4);
    else if (xml.startsWith("<![CDATA[", lt)) next = endAfter(xml, "]]>", lt + 9);
    else if (xml.startsWith("<!", lt)) {
      scan.declaration = true;
      return scan;
    } else if (xml.startsWith("<?", lt)) next = endAfter(xml, "?>", lt + 2);
    else {
      next = tagEnd(xml, lt, scan);
      if (next === -1) break;
      const closing = xml[lt + 1] === "/";
      if (scan.root === null && !closing) scan.root = nameAt(xml, lt + 1);
      if (!closing) scan.elements++;
      if (closing) depth--;
      else if (xml[next - 2] !== "/") depth++;
      if (depth > scan.maxDepth) scan.maxDepth = depth;
      if (depth === 0 && scan.root !== null && scan.rootEnd === -1) scan.rootEnd = next;
    }
    if (next === -1) break; // unterminated: the validator reports it
    i = next;
  }
  return scan;
}

function endAfter(xml: string, terminator: string, from: number): number {
  const at = xml.indexOf(terminator, from);
  return at === -1 ? -1 : at + terminator.length;
}

/** Whether anything but whitespace, comments or processing instructions follows the root element. */
export function contentAfterRoot(xml: string, scan: MarkupScan): boolean {
  if (scan.rootEnd === -1) return false;
  let i = scan.rootEnd;
  while (i < xml.length) {
    const c = xml[i] as string;
    if (c === " " || c === "\t" || c === "\r" || c === "\n") i++;
    else if (xml.startsWith("<!--", i)) i = endAfter(xml, "-->", i + 4);
    else if (xml.startsWith("<?", i)) i = endAfter(xml, "?>", i + 2);
    else return true;
    if (i === -1) return true;
  }
  return false;
}

const PREDEFINED: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" };

/**
 * Entity processing is off in the parser (no expansion, ever); names and
 * messages shown to people still need the five predefined entities and
 * character references decoded. Counting never depends on this.
 */
export function decodeXmlText(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]{1,6}|#[0-9]{1,7}|lt|gt|amp|quot|apos);/g, (whole, ref: string) => {
    if (ref[0] !== "#") return PREDEFINED[ref] ?? whole;
    const code = ref[1] === "x" ? Number.parseInt(ref.slice(2), 16) : Number.parseInt(ref.slice(1), 10);
    return code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff) ? String.fromCodePoint(code) : whole;
  });
}

/**
 * The raw inner text of an element the parser left unparsed (a failure body):
 * CDATA sections verbatim, entities decoded elsewhere. For display only.
 */
export function rawTextForDisplay(raw: string): string {
  const parts: string[] = [];
  let i = 0;
  while (i < raw.length) {
    const open = raw.indexOf("<![CDATA[", i);
    if (open === -1) {
      parts.push(decodeXmlText(raw.slice(i)));
      break;
    }
    parts.push(decodeXmlText(raw.slice(i, open)));
    const close = raw.indexOf("]]>", open + 9);
    parts.push(raw.slice(open + 9, close === -1 ? raw.length : close));
    i = close === -1 ? raw.length : close + 3;
  }
  return parts.join("");
}
