import path from "node:path";
import { describeZodError } from "../contracts/common.js";
import { TaskSpec } from "../contracts/task-spec.js";
import type { ImageFamily } from "../contracts/test-report.js";
import { familyBase, knownFamilies, requireImageFamily, unknownFamily } from "../sandbox/families.js";
import type { ImageLock } from "../sandbox/image-lock.js";
import { MiniAgentError } from "../errors.js";
import { splitWords } from "./argv.js";
import { globEscapes, pathRules, TEST_TIMEOUT_SECONDS } from "./defaults.js";
import { detectTestCommand } from "./detect.js";
import { dirtyFiles, GIT_STATE_LIMITS, type GitStateLimits } from "./git-state.js";
import { type BasisRead, recordingRepoFiles } from "./draft-basis.js";
import { type RepoFiles, repoFiles } from "./repo-files.js";
import { interpretTestCommand, type DraftedTest } from "./test-command.js";
import { checkWorkspace, type WorkspaceLimits } from "./workspace-check.js";

/**
 * An ad-hoc task: the user's folder, a goal and (optionally) a test command
 * become a TaskSpec drafted on the host, with no hand-written task.json and no
 * hidden acceptance. Every refusal is a typed error thrown before anything is
 * prepared; reading the folder is the only side effect (nothing in it is run).
 */
export interface DraftInput {
  workspace: string;
  goal: string;
  test?: string;
  writable: readonly string[];
  protect: readonly string[];
  imageFamily?: string;
}

export interface Draft {
  task: TaskSpec;
  /** the workspace's real path */
  workspace: string;
  /** where the test command came from: `--test`, or the file that was detected */
  test_source: string;
  /** files the user changed in the git worktree; they become part of the baseline */
  dirty_files: string[];
  /** lines for the user: the dirty-worktree warning, exit-code-only, rewritten options */
  warnings: string[];
  /** what detection read of the folder, and what it answered (draft-basis.ts): a kept draft runs only while it holds */
  basis: BasisRead[];
}

export interface DraftDeps extends WorkspaceLimits {
  /** bounds on reading the git worktree's state (default GIT_STATE_LIMITS) */
  gitLimits?: GitStateLimits;
  /** the daemon's image lock, which names its custom families and their bases (absent: built-in families only) */
  imageLock?: () => ImageLock | null;
}

const PRESET = "tests";
const MAX_DIRTY_SHOWN = 20;

/** `adhoc-<folder>`, in the characters a task name may hold */
function taskName(ws: string): string {
  const folder =
    path
      .basename(ws)
      .replace(/[^A-Za-z0-9_.-]+/g, "-")
      .replace(/^-+|-+$/g, "") || "workspace";
  return `adhoc-${folder}`.slice(0, 128);
}

function testFor(input: DraftInput, repo: RepoFiles): { test: DraftedTest; source: string } {
  if (input.test === undefined) {
    const found = detectTestCommand(repo);
    if (!found.ok) {
      const give =
        found.suggest === undefined
          ? 'give the command with --test "CMD ARG..."'
          : `give the command that runs the tests with --test ${JSON.stringify(found.suggest)}`;
      throw new MiniAgentError("test_command_not_found", `${found.reason}; ${give}`);
    }
    return found;
  }
  const split = splitWords(input.test);
  const got = split.ok ? interpretTestCommand(split.words, repo) : { ok: false as const, reason: `it uses ${split.reason}` };
  if (!got.ok)
    throw new MiniAgentError(
      "invalid_test_command",
      `--test ${JSON.stringify(input.test)} is refused: ${got.reason}; give --test "CMD ARG..." (one program and its arguments)`,
    );
  return { test: got.test, source: "--test" };
}

function checkGlobs(flag: string, globs: readonly string[]): void {
  for (const g of globs) {
    const why = globEscapes(g);
    if (why) throw new MiniAgentError("invalid_glob", `${flag} ${JSON.stringify(g)} is refused: ${why}`);
  }
}

export async function draftTask(input: DraftInput, deps: DraftDeps): Promise<Draft> {
  const ws = checkWorkspace(input.workspace, deps);
  if (input.goal.trim() === "") throw new MiniAgentError("invalid_request", "--goal is empty; say what the change should achieve");
  const lock = deps.imageLock?.() ?? null;
  const family: ImageFamily | undefined = input.imageFamily === undefined ? undefined : requireImageFamily(input.imageFamily);
  // refused here, before the folder is read: a family neither built in nor in the daemon's lock
  if (family !== undefined && familyBase(family, lock) === null) throw unknownFamily(family, knownFamilies(lock));
  checkGlobs("--writable", input.writable);
  checkGlobs("--protect", input.protect);
  const read = recordingRepoFiles(repoFiles(ws));
  const { test, source } = testFor(input, read.files);
  const rules = pathRules(input.writable, input.protect);

  const imageFamily = family ?? test.family ?? "node";
  // a custom family follows its base's conventions (its timeouts)
  const seconds = TEST_TIMEOUT_SECONDS[familyBase(imageFamily, lock) ?? "node"];
  const parsed = TaskSpec.safeParse({
    schema_version: 1,
    name: taskName(ws),
    task: input.goal,
    writable: rules.writable,
    creatable: rules.creatable,
    test_presets: { [PRESET]: { command: test.command, files: test.files, parser: test.parser, timeout_seconds: seconds } },
    verify_preset: PRESET,
    image_family: imageFamily,
    budgets: { per_call_seconds: seconds },
  });
  if (!parsed.success) throw new MiniAgentError("invalid_task_spec", `the drafted task spec is invalid:\n${describeZodError(parsed.error)}`);

  const warnings = [...test.notes];
  if (family && test.family && family !== test.family) warnings.push(`--image-family ${family}, but ${test.command[0]} suggests ${test.family}`);
  const dirty = await dirtyFiles(ws, deps.gitLimits ?? GIT_STATE_LIMITS);
  if (dirty.files.length > 0) {
    const shown = dirty.files.slice(0, MAX_DIRTY_SHOWN).join(", ");
    const more = dirty.files.length > MAX_DIRTY_SHOWN ? ` and ${dirty.files.length - MAX_DIRTY_SHOWN} more` : "";
    warnings.unshift(`the git worktree has ${dirty.files.length} changed file(s) that become part of the baseline: ${shown}${more}`);
  }
  if (dirty.unavailable)
    warnings.unshift(`could not list the git worktree's changed files (${dirty.unavailable}); uncommitted changes still become part of the baseline`);
  return { task: parsed.data, workspace: ws, test_source: source, dirty_files: dirty.files, warnings, basis: read.basis };
}
