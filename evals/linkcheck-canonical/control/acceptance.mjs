// Hidden acceptance for fixtures/linkcheck. Run as `node /control/acceptance.mjs`
// with cwd = the candidate workspace. Prints EXACTLY one JSON document:
//   {"schema_version":1,"cases":[{"id","passed","actual","error"}]}
// `actual` is each case's list of broken links in a canonical form; `passed`
// says the case ran and gave an answer. Whether the answer is RIGHT is decided
// by the host Verifier against task.json's `acceptance.expected`, which never
// enters the sandbox (code under test runs in here too and could read or
// print anything this harness can).
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import path from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const marker = `ACCEPTANCE-RESULT-${randomBytes(8).toString("hex")}`;

const CASES = ["root_link_ok", "root_missing", "nested_ok", "nested_missing", "nested_anchor_parent"];

function canonical(list) {
  if (!Array.isArray(list)) return null;
  return list
    .map((l) => ({ doc: l?.doc ?? null, line: l?.line ?? null, target: l?.target ?? null }))
    .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
}

const child = spawnSync(process.execPath, [path.join(here, "cases.mjs"), marker], {
  cwd: process.cwd(),
  encoding: "utf8",
  timeout: 30_000,
  maxBuffer: 4 * 1024 * 1024,
});
const line = (child.stdout ?? "").split("\n").find((l) => l.startsWith(`${marker} `));
let results = null;
let runError = null;
if (line === undefined) {
  runError = child.error ? `case runner failed: ${child.error.message}` : `case runner exited ${child.status} without a result`;
} else {
  try {
    results = JSON.parse(line.slice(marker.length + 1));
  } catch {
    runError = "case runner printed an unreadable result";
  }
}

const cases = CASES.map((id) => {
  const r = results?.[id];
  if (!r) return { id, passed: false, actual: null, error: runError ?? "no result for this case" };
  if (r.error !== null && r.error !== undefined) return { id, passed: false, actual: null, error: String(r.error) };
  const actual = canonical(r.actual);
  if (actual === null) return { id, passed: false, actual: null, error: "checkLinks did not return a list" };
  return { id, passed: true, actual, error: null };
});

process.stdout.write(JSON.stringify({ schema_version: 1, cases }) + "\n");
process.exitCode = cases.every((c) => c.passed) ? 0 : 1;
