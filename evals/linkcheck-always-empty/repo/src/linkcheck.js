import fs from "node:fs";
import path from "node:path";

// [text](target) or [text](target "title"); images ![alt](src) are links too.
const LINK = /\[([^\]]*)\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g;

/** Inline Markdown links with their 1-based line numbers; fenced code is skipped. */
export function extractLinks(markdown) {
  const links = [];
  let inFence = false;
  markdown.split("\n").forEach((line, index) => {
    if (/^\s*(```|~~~)/.test(line)) {
      inFence = !inFence;
      return;
    }
    if (inFence) return;
    for (const match of line.matchAll(LINK)) {
      links.push({ text: match[1], target: match[2], line: index + 1 });
    }
  });
  return links;
}

/** Only links to files in the same tree are checked; URLs, mail links and pure anchors are not. */
export function isRelativeTarget(target) {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return false;
  if (target.startsWith("#") || target.startsWith("/")) return false;
  return true;
}

/**
 * Checks the relative links of one Markdown document.
 * rootDir: the documentation root; docPath: the document, relative to rootDir.
 * Returns the broken links as [{ doc, line, target }].
 */
export function checkLinks(rootDir, docPath) {
  const docAbs = path.resolve(rootDir, docPath);
  const text = fs.readFileSync(docAbs, "utf8");
  const broken = [];
  for (const link of extractLinks(text)) {
    if (!isRelativeTarget(link.target)) continue;
    const file = decodeURIComponent(link.target.split("#")[0]);
    if (file === "") continue;
    const resolved = path.join(rootDir, file);
    if (!fs.existsSync(resolved)) broken.push({ doc: docPath, line: link.line, target: link.target });
  }
  return broken;
}

/** Every .md file under rootDir, relative and sorted. */
export function listDocuments(rootDir, dir = "") {
  const out = [];
  for (const entry of fs.readdirSync(path.join(rootDir, dir), { withFileTypes: true })) {
    const rel = dir === "" ? entry.name : `${dir}/${entry.name}`;
    if (entry.isDirectory()) out.push(...listDocuments(rootDir, rel));
    else if (entry.isFile() && entry.name.endsWith(".md")) out.push(rel);
  }
  return out.sort();
}
