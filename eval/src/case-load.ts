import { readFileSync } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import type { z } from "zod";
import { termSafe } from "../../client-lib/index.js";
import { MiniAgentError } from "../../daemon/src/errors.js";
import { describeZodError } from "../../daemon/src/contracts/common.js";
import { CASE_FILES, CaseExpect } from "../../daemon/src/contracts/eval-case.js";
import { ReplayFile } from "../../daemon/src/contracts/decision.js";
import { TaskSpec } from "../../daemon/src/contracts/task-spec.js";
import { checkCopySize, COPY_LIMITS, type CopyLimits } from "../../daemon/src/workspace/copy-limits.js";
import { caseHash, suiteHash, treeEntries } from "./case-hash.js";
import { checkReplayVersions } from "./case-replay-check.js";

/** A loaded, checked case (contracts/eval-case.ts describes the folder). */
export interface LoadedCase {
  /** the folder's name */
  id: string;
  /** absolute path of the case folder */
  dir: string;
  /** the case's version (case-hash.ts) */
  hash: string;
  expect: CaseExpect;
  task: TaskSpec;
  replay: ReplayFile;
  hasControl: boolean;
}

export interface LoadedSuite {
  cases: LoadedCase[];
  /** sha256 of the sorted `id:hash` lines */
  hash: string;
}

/**
 * A path or case name inside a refusal, on one terminal-safe line: the message
 * itself may span lines (a schema error), so a newline in a folder's name is
 * escaped here, where it is still known to be part of a name.
 */
const shown = (name: string) => termSafe(name);

const invalid = (message: string, details?: Record<string, unknown>) => new MiniAgentError("case_invalid", message, details ? { details } : {});

async function kindOf(p: string): Promise<"file" | "dir" | "other" | "missing"> {
  try {
    const st = await fs.lstat(p);
    return st.isFile() ? "file" : st.isDirectory() ? "dir" : "other";
  } catch {
    return "missing";
  }
}

async function readJson<S extends z.ZodType>(dir: string, name: string, schema: S): Promise<{ value: z.infer<S>; bytes: Buffer }> {
  const file = path.join(dir, name);
  const kind = await kindOf(file);
  if (kind !== "file") throw invalid(`${shown(file)}: ${kind === "missing" ? "missing" : "not a regular file"} (every case has ${name})`, { file });
  const bytes = await fs.readFile(file);
  let raw: unknown;
  try {
    raw = JSON.parse(bytes.toString("utf8"));
  } catch (err) {
    throw invalid(`${shown(file)}: not valid JSON (${(err as Error).message})`, { file });
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const paths = parsed.error.issues.map((i) => i.path.join("."));
    throw invalid(`${shown(file)} is invalid:\n${describeZodError(parsed.error)}`, { file, paths });
  }
  return { value: parsed.data, bytes };
}

/** Loads one case folder; every refusal is case_invalid (naming the file and field) or case_replay_mismatch (naming the call). */
export async function loadCase(dirIn: string, limits: CopyLimits = COPY_LIMITS): Promise<LoadedCase> {
  const dir = path.resolve(dirIn);
  if ((await kindOf(dir)) !== "dir") throw invalid(`${shown(dir)}: not a case folder (it does not exist or is not a folder)`, { file: dir });
  const known = new Set<string>(Object.values(CASE_FILES));
  for (const name of (await fs.readdir(dir)).sort()) {
    if (!known.has(name))
      throw invalid(`${shown(path.join(dir, name))}: unknown entry in a case folder (a case holds ${[...known].join(", ")})`, { file: path.join(dir, name) });
  }
  const repoDir = path.join(dir, CASE_FILES.repo);
  if ((await kindOf(repoDir)) !== "dir") throw invalid(`${shown(repoDir)}: missing (every case has repo/)`, { file: repoDir });
  const controlDir = path.join(dir, CASE_FILES.control);
  const controlKind = await kindOf(controlDir);
  if (controlKind !== "dir" && controlKind !== "missing") throw invalid(`${shown(controlDir)}: not a folder`, { file: controlDir });

  const task = await readJson(dir, CASE_FILES.task, TaskSpec);
  const expect = await readJson(dir, CASE_FILES.expect, CaseExpect);
  const replay = await readJson(dir, CASE_FILES.replay, ReplayFile);
  if (task.value.acceptance && controlKind === "missing")
    throw invalid(`${shown(path.join(dir, CASE_FILES.task))}: the task has acceptance cases but the case has no control/`, {
      file: path.join(dir, CASE_FILES.task),
      paths: ["acceptance"],
    });
  if (task.value.hidden_tests !== undefined && controlKind === "missing")
    throw invalid(`${shown(path.join(dir, CASE_FILES.task))}: the task has hidden_tests but the case has no control/`, {
      file: path.join(dir, CASE_FILES.task),
      paths: ["hidden_tests"],
    });

  // measured before a byte of repo/ is read: the daemon copies it into every run's workspace, and would refuse it there
  await checkCopySize(repoDir, "case repo/", limits);
  const repo = await treeEntries(repoDir, `${dir}/repo`);
  const control = controlKind === "dir" ? await treeEntries(controlDir, `${dir}/control`) : null;

  // the replay's versions, checked against repo/'s bytes (regular files only: treeEntries refused the rest);
  // only the files a call names are read, one at a time, never the whole repo/ into memory
  const repoFiles = new Set(repo.map((e) => e[0]));
  const readRepoFile = (rel: string) => (repoFiles.has(rel) ? readFileSync(path.join(repoDir, ...rel.split("/"))) : null);
  checkReplayVersions(replay.value, readRepoFile, new Set(expect.value.stale_calls ?? []));

  return {
    id: path.basename(dir),
    dir,
    hash: caseHash({ repo, taskBytes: task.bytes, control, expectBytes: expect.bytes }),
    expect: expect.value,
    task: task.value,
    replay: replay.value,
    hasControl: control !== null,
  };
}

/**
 * SUITE_DIR...: each is a case folder (it has expect.json) or a folder whose
 * immediate subfolders are cases. Sorted by id; two cases with one id, or no
 * case at all, is case_invalid.
 */
export async function loadSuite(dirs: readonly string[], limits: CopyLimits = COPY_LIMITS): Promise<LoadedSuite> {
  const caseDirs: string[] = [];
  for (const d of dirs) {
    const abs = path.resolve(d);
    if ((await kindOf(abs)) !== "dir") throw invalid(`${shown(abs)}: not a folder (a suite is a case folder or a folder of case folders)`, { file: abs });
    if ((await kindOf(path.join(abs, CASE_FILES.expect))) !== "missing") {
      caseDirs.push(abs);
      continue;
    }
    for (const e of (await fs.readdir(abs, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (e.isDirectory()) caseDirs.push(path.join(abs, e.name));
    }
  }
  if (caseDirs.length === 0) throw invalid(`no case found in ${shown(dirs.map((d) => path.resolve(d)).join(", "))}`);
  const byId = new Map<string, string>();
  for (const c of caseDirs) {
    const id = path.basename(c);
    const other = byId.get(id);
    if (other !== undefined) throw invalid(`two cases have the id ${shown(id)}: ${shown(other)} and ${shown(c)}`, { id, paths: [other, c] });
    byId.set(id, c);
  }
  const cases: LoadedCase[] = [];
  for (const c of caseDirs) cases.push(await loadCase(c, limits));
  cases.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return { cases, hash: suiteHash(cases) };
}
