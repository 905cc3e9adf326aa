import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { MiniAgentError } from "../../daemon/src/errors.js";
import { CASE_FILES } from "../../daemon/src/contracts/eval-case.js";
import { canonicalJson, sha256Hex } from "../../daemon/src/workspace/hash.js";

/**
 * A case's version: the ONE recipe (evals/README.md quotes it).
 *
 *   tree(d)  = for every regular file under d, sorted by its `/`-separated
 *              relative path: [path, "x" if any executable bit is set else "-", sha256(bytes)]
 *              (folders count only through their files; a symlink or special file is refused)
 *   hash     = sha256 of canonicalJson({ repo: tree(repo/), task: sha256(task.json bytes),
 *                                        control: tree(control/) or null, expect: sha256(expect.json bytes) })
 *
 * replay.json is left out on purpose: it is what an eval compares across
 * suites over the same cases (contracts/eval-case.ts).
 */
export type TreeEntry = [rel: string, exec: "x" | "-", sha256: string];

/** Every regular file under `root`, sorted; a symlink or special file is case_invalid naming it. */
export async function treeEntries(root: string, label: string): Promise<TreeEntry[]> {
  const out: TreeEntry[] = [];
  const visit = async (abs: string, rel: string): Promise<void> => {
    for (const name of (await fs.readdir(abs)).sort()) {
      const childAbs = path.join(abs, name);
      const childRel = rel === "" ? name : `${rel}/${name}`;
      const st = await fs.lstat(childAbs);
      if (st.isDirectory()) await visit(childAbs, childRel);
      else if (st.isFile()) out.push([childRel, (st.mode & 0o111) !== 0 ? "x" : "-", await fileSha256(childAbs)]);
      else
        throw new MiniAgentError(
          "case_invalid",
          `${label}/${childRel} is ${st.isSymbolicLink() ? "a symlink" : "not a regular file"}; a case holds only regular files and folders`,
        );
    }
  };
  await visit(root, "");
  return out.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

/** SHA-256 of a file's bytes, streamed: a case's file is never held whole (a 1.5 GB sparse one once took the client to 1.6 GB). */
async function fileSha256(file: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(file, { highWaterMark: 256 * 1024 })) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

export interface HashInput {
  repo: TreeEntry[];
  taskBytes: Buffer;
  control: TreeEntry[] | null;
  expectBytes: Buffer;
}

export function caseHash(i: HashInput): string {
  return sha256Hex(canonicalJson({ repo: i.repo, task: sha256Hex(i.taskBytes), control: i.control, expect: sha256Hex(i.expectBytes) }));
}

/** The suite's version (contracts/eval-report.ts): sha256 of the sorted `id:hash` lines, each ending in a newline. */
export function suiteHash(cases: ReadonlyArray<{ id: string; hash: string }>): string {
  const lines = cases.map((c) => `${c.id}:${c.hash}\n`).sort();
  return sha256Hex(lines.join(""));
}

export const CASE_HASHED = [CASE_FILES.repo, CASE_FILES.task, CASE_FILES.control, CASE_FILES.expect] as const;
