import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { CASE_FILES, CaseExpect } from "../../daemon/src/contracts/eval-case.js";
import { MiniAgentError } from "../../daemon/src/errors.js";

/**
 * MINIMAL loader (placeholder for the full one with replay/version checks):
 * same signature, so `eval run` builds on it until the real module lands.
 */
export interface LoadedCase {
  /** the folder name */
  id: string;
  dir: string;
  /** SHA-256 over repo/, task.json, control/, expect.json (not replay.json) */
  hash: string;
  expect: CaseExpect;
  task: unknown;
  replay: unknown;
  hasControl: boolean;
}

export function loadCase(dir: string): LoadedCase {
  const abs = path.resolve(dir);
  const id = path.basename(abs);
  const expectPath = path.join(abs, CASE_FILES.expect);
  const raw = readJson(expectPath, id);
  const parsed = CaseExpect.safeParse(raw);
  if (!parsed.success) throw new MiniAgentError("case_invalid", `case ${id}: ${CASE_FILES.expect}: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  if (!isDir(path.join(abs, CASE_FILES.repo))) throw new MiniAgentError("case_invalid", `case ${id}: no ${CASE_FILES.repo}/ folder`);
  const task = readJson(path.join(abs, CASE_FILES.task), id);
  const replay = readJson(path.join(abs, CASE_FILES.replay), id);
  return { id, dir: abs, hash: caseHash(abs), expect: parsed.data, task, replay, hasControl: isDir(path.join(abs, CASE_FILES.control)) };
}

/** Each dir is a case folder (it has expect.json) or a folder of case folders; sorted by id, ids unique. */
export function loadSuite(dirs: string[]): LoadedCase[] {
  const cases: LoadedCase[] = [];
  for (const d of dirs) {
    if (!isDir(d)) throw new MiniAgentError("case_invalid", `${d} is not a folder`);
    if (fs.existsSync(path.join(d, CASE_FILES.expect))) cases.push(loadCase(d));
    else
      for (const name of fs.readdirSync(d).sort())
        if (fs.existsSync(path.join(d, name, CASE_FILES.expect))) cases.push(loadCase(path.join(d, name)));
  }
  cases.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  for (let i = 1; i < cases.length; i++)
    if (cases[i]!.id === cases[i - 1]!.id) throw new MiniAgentError("case_invalid", `two cases are named ${cases[i]!.id}: ${cases[i - 1]!.dir} and ${cases[i]!.dir}`);
  if (cases.length === 0) throw new MiniAgentError("case_invalid", `no case (a folder with ${CASE_FILES.expect}) in ${dirs.join(", ")}`);
  return cases;
}

export function caseHash(dir: string): string {
  const h = createHash("sha256");
  for (const part of [CASE_FILES.repo, CASE_FILES.task, CASE_FILES.control, CASE_FILES.expect]) {
    for (const rel of walk(dir, part)) {
      h.update(`${rel}\0`);
      h.update(fs.readFileSync(path.join(dir, rel)));
      h.update("\0");
    }
  }
  return h.digest("hex");
}

function walk(root: string, rel: string): string[] {
  const abs = path.join(root, rel);
  let st: fs.Stats;
  try {
    st = fs.lstatSync(abs);
  } catch {
    return [];
  }
  if (st.isFile()) return [rel];
  if (!st.isDirectory()) return [];
  return fs
    .readdirSync(abs)
    .sort()
    .flatMap((n) => walk(root, path.posix.join(rel, n)));
}

function readJson(p: string, id: string): unknown {
  try {
    return JSON.parse(fs.readFileSync(p, "utf8"));
  } catch (err) {
    throw new MiniAgentError("case_invalid", `case ${id}: cannot read ${path.basename(p)}: ${(err as Error).message}`);
  }
}

function isDir(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}
