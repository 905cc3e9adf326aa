import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { isAssignedSecret } from "../daemon/src/redact/rules.js";
import { addedLines, scanLines } from "../daemon/src/verifier/secret-scan.js";

/**
 * `node --import tsx scripts/secret-scan-corpus.ts [--show N] DIR...`
 * The Verifier's secret scan (verifier/secret-scan.ts) over every text file
 * (< 2 MiB) under DIR as if each line were added by a run: how many files and
 * lines, the hits per rule and the first N hits as file:line rule (never the
 * matched text). Point it at ordinary code (node_modules, /usr/lib/python3) to
 * count false positives. Then, for the entropy rule, the share of random
 * [A-Za-z0-9] and hex values assigned to `API_KEY` that it catches, by length.
 */
const SKIP_DIRS = new Set([".git", "dist", ".state"]);
const MAX_BYTES = 2 * 1024 * 1024;

function* walk(dir: string): Generator<string> {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory() && !SKIP_DIRS.has(e.name)) yield* walk(p);
    else if (e.isFile()) yield p;
  }
}

function randomValue(alphabet: string, n: number): string {
  return [...randomBytes(n)].map((b) => alphabet[b % alphabet.length]).join("");
}

const args = process.argv.slice(2);
let show = 20;
const dirs: string[] = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--show") show = Number(args[++i]);
  else if (args[i]!.startsWith("--")) throw new Error(`unknown option ${args[i]}; use --show N DIR...`);
  else dirs.push(args[i]!);
}
if (dirs.length === 0) throw new Error("name at least one DIR to scan");

let files = 0;
let lines = 0;
const perRule = new Map<string, number>();
const shown: string[] = [];
for (const dir of dirs) {
  for (const file of walk(dir)) {
    if (fs.statSync(file).size > MAX_BYTES) continue;
    const bytes = fs.readFileSync(file);
    if (bytes.includes(0)) continue;
    const added = addedLines(null, bytes.toString("utf8"));
    files++;
    lines += added.length;
    for (const hit of scanLines(file, added)) {
      perRule.set(hit.rule, (perRule.get(hit.rule) ?? 0) + 1);
      if (shown.length < show) shown.push(`${hit.path}:${hit.line} ${hit.rule}`);
    }
  }
}
console.log(JSON.stringify({ files, lines, hits: Object.fromEntries(perRule) }));
for (const s of shown) console.log(`  ${s}`);

const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const TRIALS = 20_000;
for (const [name, alphabet, lengths] of [
  ["alnum", ALNUM, [16, 20, 24, 32, 40]],
  ["hex", "0123456789abcdef", [32, 40, 64]],
] as const) {
  const caught = lengths.map((n) => {
    let hit = 0;
    for (let i = 0; i < TRIALS; i++) if (isAssignedSecret("API_KEY", randomValue(alphabet, n))) hit++;
    return `${n}: ${((100 * hit) / TRIALS).toFixed(1)} %`;
  });
  console.log(`random ${name} values under API_KEY caught, by length: ${caught.join(", ")}`);
}
