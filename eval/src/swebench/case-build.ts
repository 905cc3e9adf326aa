import fs from "node:fs";
import path from "node:path";
import { detectTestCommand } from "../../../daemon/src/adhoc/detect.js";
import { TEST_TIMEOUT_SECONDS } from "../../../daemon/src/adhoc/defaults.js";
import { repoFiles } from "../../../daemon/src/adhoc/repo-files.js";
import type { CaseExpect } from "../../../daemon/src/contracts/eval-case.js";
import { CASE_FILES } from "../../../daemon/src/contracts/eval-case.js";
import { TaskSpec } from "../../../daemon/src/contracts/task-spec.js";
import { MiniAgentError } from "../../../daemon/src/errors.js";
import { loadCase } from "../case-load.js";
import { applyGitPatch } from "./git-patch.js";
import { goldReplay } from "./gold-replay.js";
import { caseIdOf, type SweBenchInstance } from "./instance.js";
import { findRepo, readBaseTree, type TreeFile, type TreeLimits } from "./repo-tree.js";

/**
 * One SWE-bench instance as an eval case folder (contracts/eval-case.ts):
 *   repo/                 the tree at base_commit (regular files and the exec bit)
 *   control/hidden_tests/ the files test_patch adds or changes, as they are after it:
 *                         laid over the workspace by the Verifier only (task `hidden_tests`)
 *   task.json             the verify preset detected over repo/ (adhoc/detect.ts, as an
 *                         ad-hoc run would get), FAIL_TO_PASS / PASS_TO_PASS, hidden_tests
 *   replay.json           the gold patch, written file by file through apply_patch
 *   expect.json           completed: the gold patch resolves the instance
 * Built in a hidden folder beside the target and checked by the loader `eval run`
 * uses; only a case that loads is renamed into place, so a refused instance
 * leaves nothing behind.
 */
export interface ImportedCase {
  id: string;
  dir: string;
  repoFiles: number;
  hiddenTests: string[];
  /** what the import left out or decided, for the user (symlinks, submodules, the test command's notes) */
  notes: string[];
}

const HIDDEN = "hidden_tests";
const TASK_TEXT_MAX = 16_384;

const refuse = (message: string) => new MiniAgentError("invalid_fields", message);

function writeTree(root: string, files: Iterable<[string, TreeFile]>): void {
  for (const [rel, f] of files) {
    const abs = path.join(root, ...rel.split("/"));
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    // a fresh folder: "wx" never follows or overwrites anything
    fs.writeFileSync(abs, f.data, { flag: "wx", mode: f.exec ? 0o755 : 0o644 });
  }
}

function taskText(inst: SweBenchInstance): string {
  const text = inst.problem_statement?.trim() || `Resolve ${inst.instance_id} in ${inst.repo}.`;
  return text.length > TASK_TEXT_MAX ? `${text.slice(0, TASK_TEXT_MAX - 20)}\n[… cut short]` : text;
}

export async function importInstance(inst: SweBenchInstance, reposDir: string, outDir: string, limits: TreeLimits): Promise<ImportedCase> {
  const id = caseIdOf(inst.instance_id);
  const target = path.join(outDir, id);
  if (fs.existsSync(target)) throw refuse(`${target} already exists (two instances with the folder name ${id})`);
  const found = findRepo(reposDir, inst.repo);
  if (!found.ok) throw new MiniAgentError("not_found", found.why);
  const tree = await readBaseTree(found, inst.base_commit, limits);

  const tests = applyGitPatch(tree.files, inst.test_patch, "test_patch");
  const deleted = tests.filter((c) => c.after === null).map((c) => c.rel);
  // a deletion cannot be laid over a workspace: the Verifier's sandbox would still hold the file
  if (deleted.length > 0) throw refuse(`test_patch deletes ${deleted.join(", ")}; hidden tests can add or change files, never delete one`);
  const replay = goldReplay(applyGitPatch(tree.files, inst.patch, "patch"), inst.instance_id);

  const work = path.join(outDir, `.importing-${id}`);
  fs.rmSync(work, { recursive: true, force: true });
  try {
    const repoDir = path.join(work, CASE_FILES.repo);
    fs.mkdirSync(repoDir, { recursive: true });
    writeTree(repoDir, tree.files);
    const detected = detectTestCommand(repoFiles(repoDir));
    if (!detected.ok) throw refuse(`no test command: ${detected.reason}`);
    const t = detected.test;
    const family = t.family ?? "node";
    const hidden = tests.map((c) => [c.rel, c.after!] as [string, TreeFile]);
    if (hidden.length > 0) writeTree(path.join(work, CASE_FILES.control, HIDDEN), hidden);
    const calls = replay.decisions.length;
    const task = TaskSpec.safeParse({
      schema_version: 1,
      name: id,
      task: taskText(inst),
      writable: ["**"],
      creatable: ["**"],
      test_presets: {
        tests: {
          command: t.command,
          files: t.files,
          parser: t.parser,
          timeout_seconds: TEST_TIMEOUT_SECONDS[family as keyof typeof TEST_TIMEOUT_SECONDS] ?? 300,
        },
      },
      verify_preset: "tests",
      image_family: family,
      FAIL_TO_PASS: inst.FAIL_TO_PASS,
      PASS_TO_PASS: inst.PASS_TO_PASS,
      ...(hidden.length > 0 && { hidden_tests: HIDDEN }),
      // one turn and one call per file of the gold patch, with room to spare
      budgets: { model_turns: Math.min(1000, Math.max(30, calls + 10)), tool_calls: Math.min(1000, Math.max(40, calls + 10)) },
    });
    if (!task.success) throw refuse(`the case's task.json would be invalid: ${task.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
    const expect: CaseExpect = {
      schema_version: 1,
      description: `SWE-bench instance ${inst.instance_id} (${inst.repo} at ${inst.base_commit.slice(0, 12)}): its reference patch resolves it`,
      status: "completed",
    };
    const json = (v: unknown) => `${JSON.stringify(v, null, 2)}\n`;
    fs.writeFileSync(path.join(work, CASE_FILES.task), json(task.data), { flag: "wx" });
    fs.writeFileSync(path.join(work, CASE_FILES.replay), json(replay), { flag: "wx" });
    fs.writeFileSync(path.join(work, CASE_FILES.expect), json(expect), { flag: "wx" });
    // `eval run` must accept it as it is: the same loader, the same copy limits and replay check
    await loadCase(work, limits);
    fs.renameSync(work, target);
    return {
      id,
      dir: target,
      repoFiles: tree.files.size,
      hiddenTests: hidden.map(([rel]) => rel),
      notes: [...tree.skipped, ...t.notes, `test command (${detected.source}): ${t.command.join(" ")}`],
    };
  } catch (err) {
    fs.rmSync(work, { recursive: true, force: true });
    throw err;
  }
}
