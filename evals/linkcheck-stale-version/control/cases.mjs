// Runs in a CHILD process with the candidate's code loaded; the parent
// (acceptance.mjs) alone prints the protocol document, so candidate code that
// prints or exits early only loses its own answers. Whether an answer is right
// is decided by the host, which alone knows the expected answers.
import path from "node:path";
import process from "node:process";
import { fileURLToPath, pathToFileURL } from "node:url";

const docs = path.join(path.dirname(fileURLToPath(import.meta.url)), "docs");
const marker = process.argv[2];
const write = process.stdout.write.bind(process.stdout);
// candidate output goes to stderr so stdout carries only the result line
process.stdout.write = process.stderr.write.bind(process.stderr);
console.log = console.error;

const CASE_DOCS = {
  root_link_ok: "ok.md",
  root_missing: "index.md",
  nested_ok: "guide/intro.md",
  nested_missing: "guide/broken.md",
  nested_anchor_parent: "api/ref.md",
};

const results = {};
let mod = null;
try {
  mod = await import(pathToFileURL(path.resolve(process.cwd(), "src/linkcheck.js")).href);
} catch (err) {
  for (const id of Object.keys(CASE_DOCS)) results[id] = { actual: null, error: `import failed: ${String(err?.message ?? err).slice(0, 300)}` };
}
if (mod !== null) {
  for (const [id, doc] of Object.entries(CASE_DOCS)) {
    try {
      const out = mod.checkLinks(docs, doc);
      results[id] = { actual: JSON.parse(JSON.stringify(out ?? null)), error: null };
    } catch (err) {
      results[id] = { actual: null, error: String(err?.message ?? err).slice(0, 300) };
    }
  }
}
write(`${marker} ${JSON.stringify(results)}\n`);
