import fs from "node:fs";
import path from "node:path";
import { describeZodError } from "../../contracts/common.js";
import type { ReplayFile } from "../../contracts/decision.js";
import type { EffectivePolicy } from "../../contracts/policy.js";
import { Runtime, SandboxInclude, sandboxIncludeRefusal } from "../../contracts/sandbox.js";
import { Budgets, TaskSpec } from "../../contracts/task-spec.js";
import type { ImageFamily } from "../../contracts/test-report.js";
import { requireImageFamily } from "../../sandbox/families.js";
import { MiniAgentError } from "../../errors.js";
import { isBuiltinFixture, isCanonicalReplay, loadReplayFile } from "../../models/replay.js";
import { realPathOf, systemFolderOf, systemFolderRefusal } from "../../workspace/index.js";
import { BUILTIN_DAEMON_POLICY, type DaemonPolicy } from "../../policy/daemon-policy.js";
import { type PolicyTrace, resolveRunPolicy } from "../../policy/run-policy.js";
import { checkWorkspaceVerifyCommands } from "../../policy/workspace-verify.js";
import { WORKSPACE_POLICY_FILE } from "../../policy/workspace-policy.js";
import type { CreateRunInput } from "../service.js";

/** What createRun has checked BEFORE anything is created on disk. */
export interface CheckedCreate {
  task: TaskSpec;
  budgets: Budgets;
  workspace: string;
  fixtureDir: string | null;
  /** the task's acceptance assets to copy into the run's control dir */
  taskControlDir: string | null;
  replay: { path: string; file: ReplayFile; trusted: boolean } | null;
  /** the run's `--sandbox-include` globs, checked */
  sandboxInclude: string[];
  /** the policy the run keeps for its whole life, and what the trace says of it */
  policy: { effective: EffectivePolicy; trace: PolicyTrace };
}

function readTaskSpec(file: string): TaskSpec {
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch (cause) {
    throw new MiniAgentError("invalid_task_spec", `cannot read ${path.basename(file)} as JSON`, { cause });
  }
  const parsed = TaskSpec.safeParse(raw);
  if (!parsed.success) throw new MiniAgentError("invalid_task_spec", `task spec is invalid:\n${describeZodError(parsed.error)}`);
  return parsed.data;
}

/**
 * The image family a fixture's task.json names, for the create-run route's early
 * live gate; undefined when it names none or cannot be read (createRun then
 * refuses the fixture with the real reason).
 */
export function fixtureImageFamily(fixtureDir: string): ImageFamily | undefined {
  try {
    return readTaskSpec(path.join(path.resolve(fixtureDir), "task.json")).image_family;
  } catch {
    return undefined;
  }
}

function isDir(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Every refusal of createRun happens here, before a workspace or a row exists:
 * bad spec, untrusted replay on the host backend, a live model on the host
 * backend, a workspace that must (not) exist.
 */
export function checkCreateInput(input: CreateRunInput, builtinFixturesDir: string, daemonPolicy: DaemonPolicy = BUILTIN_DAEMON_POLICY): CheckedCreate {
  const bad = (message: string) => new MiniAgentError("invalid_request", message);
  if (!path.isAbsolute(input.workspace)) throw bad("workspace must be an absolute path");
  // every kind of run, not only ad hoc: a task spec's run works in place, and a fixture's repo/ is copied there
  const realWorkspace = realPathOf(input.workspace);
  const system = systemFolderOf(realWorkspace);
  if (system) throw new MiniAgentError("invalid_workspace", `workspace ${input.workspace} ${systemFolderRefusal(input.workspace, realWorkspace, system)}`);
  if ((input.fixtureDir === undefined) === (input.taskSpec === undefined)) throw bad("give exactly one of fixtureDir or taskSpec");
  if (input.model === "live" && input.backend === "trusted_local") {
    throw new MiniAgentError("backend_not_isolated", "a live model never runs on the trusted_local backend; use the container backend");
  }
  if (input.runtime !== undefined) {
    // refused rather than ignored: host processes have no OCI runtime, and a run recorded as "runsc" that ran on the host would lie
    if (input.backend === "trusted_local") throw bad("--runtime chooses the container backend's OCI runtime; trusted_local runs host processes and has none");
    if (!Runtime.safeParse(input.runtime).success) throw bad(`unknown runtime ${JSON.stringify(input.runtime)}; use runc or runsc`);
  }

  let task: TaskSpec;
  let fixtureDir: string | null = null;
  let taskControlDir: string | null = input.controlDir ? path.resolve(input.controlDir) : null;
  if (input.fixtureDir !== undefined) {
    fixtureDir = path.resolve(input.fixtureDir);
    if (!isDir(path.join(fixtureDir, "repo"))) throw bad(`fixture ${path.basename(fixtureDir)} has no repo/ folder`);
    task = readTaskSpec(path.join(fixtureDir, "task.json"));
    if (taskControlDir === null && isDir(path.join(fixtureDir, "control"))) taskControlDir = path.join(fixtureDir, "control");
    if (fs.existsSync(input.workspace)) throw bad("with a fixture, the workspace must not exist yet (the fixture's repo/ is copied into it)");
  } else {
    const parsed = TaskSpec.safeParse(input.taskSpec);
    if (!parsed.success) throw new MiniAgentError("invalid_task_spec", `task spec is invalid:\n${describeZodError(parsed.error)}`);
    task = parsed.data;
    if (!isDir(input.workspace)) throw bad("the workspace must be an existing directory");
  }
  if (input.imageFamily !== undefined) task = { ...task, image_family: requireImageFamily(input.imageFamily) };
  if (task.acceptance && taskControlDir === null) throw bad("the task has acceptance cases but no control dir was given");
  if (task.hidden_tests !== undefined && taskControlDir === null) throw bad("the task has hidden_tests but no control dir was given");
  if (input.backend === "trusted_local") {
    // host processes have no sandbox /tmp to read a JUnit report back from (sandbox/local-executor.ts)
    const junit = Object.keys(task.test_presets).filter((name) => task.test_presets[name]!.parser === "junit_xml");
    if (junit.length > 0) {
      throw new MiniAgentError(
        "report_file_unsupported",
        `test preset(s) ${junit.join(", ")} read a JUnit report file from the sandbox, which the trusted_local backend does not have; use the container backend`,
      );
    }
  }

  const budgets = Budgets.safeParse({ ...task.budgets, ...(input.budgets ?? {}) });
  if (!budgets.success) throw bad(`budgets are invalid:\n${describeZodError(budgets.error)}`);

  const include = SandboxInclude.safeParse(input.sandboxInclude ?? []);
  if (!include.success) throw bad(`sandbox_include is invalid:\n${describeZodError(include.error)}`);
  for (const glob of include.data) {
    const why = sandboxIncludeRefusal(glob);
    if (why) throw new MiniAgentError("invalid_glob", why);
  }

  let replay: CheckedCreate["replay"] = null;
  if (input.model === "replay") {
    const replayPath = input.replayPath ? path.resolve(input.replayPath) : fixtureDir ? path.join(fixtureDir, "replay.json") : null;
    if (replayPath === null) throw bad("a replay model needs a replay file (or a fixture with replay.json)");
    const trusted = isCanonicalReplay(replayPath, fixtureDir ?? undefined, builtinFixturesDir);
    if (input.backend === "trusted_local" && !trusted && !input.trustReplayFile) {
      throw new MiniAgentError(
        "replay_untrusted",
        "only the built-in canonical replay runs on the trusted_local backend; pass trustReplayFile (--trust-replay-file) to state that you trust this file, or use the container backend",
      );
    }
    replay = { path: replayPath, file: loadReplayFile(replayPath), trusted };
  }

  // the workspace's own rules: a fixture's repo/ is what becomes the workspace; a broken file refuses the run here
  const resolved = resolveRunPolicy(daemonPolicy, input.policyProfile, fixtureDir ? path.join(fixtureDir, "repo") : path.resolve(input.workspace));
  // the workspace file's verify commands are the repository's: the command policy decides them here, while the user is there
  const workspaceVerify = checkWorkspaceVerifyCommands(resolved.policy, input.backend);
  const trace = workspaceVerify.length > 0 ? { ...resolved.trace, workspace_verify_commands: workspaceVerify } : resolved.trace;
  const policy = { effective: resolved.policy, trace };
  if (input.backend === "trusted_local") refuseHostCommandsFromData(input, resolved.policy, fixtureDir, builtinFixturesDir);
  return { task, budgets: budgets.data, workspace: path.resolve(input.workspace), fixtureDir, taskControlDir, replay, sandboxInclude: include.data, policy };
}

/**
 * trusted_local runs host processes, so nothing a repository names may decide
 * what they are: an ad-hoc draft's test command comes from the workspace's own
 * files (package.json, a Makefile), and a workspace policy file's
 * verify_commands are the workspace's words. Both run only in a container.
 */
function refuseHostCommandsFromData(input: CreateRunInput, policy: EffectivePolicy, fixtureDir: string | null, builtinFixturesDir: string): void {
  if (input.adhoc) {
    throw new MiniAgentError(
      "backend_not_isolated",
      "an ad-hoc run's test command comes from the workspace's own files and never runs as a host process; use the container backend",
    );
  }
  const fromWorkspace = policy.workspace?.verify_commands ?? [];
  if (fromWorkspace.length > 0 && !(fixtureDir !== null && isBuiltinFixture(fixtureDir, builtinFixturesDir))) {
    throw new MiniAgentError(
      "backend_not_isolated",
      `the workspace's ${WORKSPACE_POLICY_FILE} adds verify commands (${fromWorkspace.map((c) => c.name).join(", ")}) that would run as host processes on trusted_local; use the container backend`,
    );
  }
}
