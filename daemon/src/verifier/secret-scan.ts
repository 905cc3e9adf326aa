import { VALUE_SHAPES } from "../redact/index.js";
import { splitLines } from "../tools/text.js";

/**
 * The secret scan of a run's final diff (issue 12, "Verifier extras"): the
 * ADDED lines of every changed text file, against the run's baseline, through
 * the shapes of the daemon's one redaction rule set that are a credential
 * wherever they appear in code (`inDiff` in redact/rules.ts). A hit names the
 * file, the line and the rule, NEVER the matched text: the verdict, the run
 * view, the trace and the client all show it, and none of them may carry the
 * value (a hit is not redacted anywhere else if its shape is only ours).
 *
 *   addedLines(before, after)    new-file line numbers and text of the added lines
 *   scanLines(path, lines)       hits in those lines
 *
 * Pure: the Verifier reads the files (baseline copy and workspace) and calls these.
 */
export interface SecretHit {
  path: string;
  /** 1-based line in the file as it is now */
  line: number;
  /** the rule's name in redact/rules.ts, e.g. aws_access_key_id, assigned_secret */
  rule: string;
}

export interface AddedLine {
  line: number;
  text: string;
}

const SCAN_SHAPES = VALUE_SHAPES.filter((s) => s.inDiff === true);

/** a line longer than this is scanned only up to it (a minified bundle is one line) */
export const SCAN_LINE_MAX_CHARS = 64 * 1024;

/**
 * The lines of `after` the run added: each line of the file as it is now that the
 * baseline does not hold (as many times as it held it). Not a minimal diff: a line
 * moved within the file is not "added", which is right for a secret scan (it was
 * there before the run) and costs one pass over each file, where a line diff of a
 * rewritten 20,000-line file took seconds. `before` null: the file is new (or its
 * baseline content is unknown): every line is added.
 */
export function addedLines(before: string | null, after: string): AddedLine[] {
  const had = new Map<string, number>();
  for (const line of before === null ? [] : splitLines(before)) had.set(line, (had.get(line) ?? 0) + 1);
  const out: AddedLine[] = [];
  for (const [i, text] of splitLines(after).entries()) {
    const n = had.get(text) ?? 0;
    if (n > 0) had.set(text, n - 1);
    else out.push({ line: i + 1, text });
  }
  return out;
}

export function scanLines(path: string, lines: readonly AddedLine[]): SecretHit[] {
  const hits: SecretHit[] = [];
  for (const { line, text } of lines) {
    const seen = new Set<string>();
    const cut = text.length > SCAN_LINE_MAX_CHARS ? text.slice(0, SCAN_LINE_MAX_CHARS) : text;
    for (const shape of SCAN_SHAPES) {
      if (seen.has(shape.name)) continue;
      if (matches(shape, cut)) {
        seen.add(shape.name);
        hits.push({ path, line, rule: shape.name });
      }
    }
  }
  return hits;
}

/**
 * A shape with a `replace` decides itself (assigned_secret keeps what is not random);
 * a prefix shape must also carry a digit: `pk-table-header-cell` is a CSS class, while
 * real keys of those shapes are random and all but never digit-free; a PEM header must be a key block.
 */
function matches(shape: (typeof VALUE_SHAPES)[number], text: string): boolean {
  const re = new RegExp(shape.pattern.source, shape.pattern.flags);
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    if (m[0].length === 0) re.lastIndex++;
    if (shape.replace) {
      const replaced = (shape.replace as (...a: unknown[]) => string)(...m, m.index, text);
      if (replaced !== m[0]) return true;
    } else if (shape.name === "pem_private_key" ? isKeyBlock(text) : /\d/.test(m[0])) return true;
  }
  return false;
}

/**
 * A private key block, not code that handles one: the header opens the line (a .pem
 * file, a YAML block) or key material follows it on the line (`"-----BEGIN ...-----\nMIIE..."`
 * in JSON or a string). `/^-----BEGIN OPENSSH PRIVATE KEY-----/` in a parser, or a
 * template that starts one, is not a key.
 */
function isKeyBlock(line: string): boolean {
  return /^\s*["'`]?-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/.test(line) || /PRIVATE KEY-----(?:\\r|\\n|\s)*[A-Za-z0-9+/]{16,}/.test(line);
}

/** What the evidence says about a hit: file and line, never the value. */
export function describeHit(h: SecretHit): string {
  return `${h.path} line ${h.line} (${h.rule})`;
}
