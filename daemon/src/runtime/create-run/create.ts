import fs from "node:fs";
import path from "node:path";
import { statePath } from "../../config/state-dir.js";
import { prepareProjectContext } from "../../context/stored-context.js";
import { DEFAULT_ORCHESTRATOR } from "../../contracts/run.js";
import { taskImageFamily } from "../../contracts/task-spec.js";
import { isMiniAgentError, MiniAgentError } from "../../errors.js";
import type { Model } from "../../models/model.js";
import { ReplayModel } from "../../models/replay.js";
import type { Orchestrators } from "../../orchestrators/registry.js";
import { policyForImage } from "../../policy/image-programs.js";
import type { RunRecord } from "../../store/records.js";
import { checkCopySize, COPY_LIMITS } from "../../workspace/copy-limits.js";
import { checkControlDir, copyControlDir, stagingName } from "../control-dir.js";
import type { RuntimeDeps } from "../deps.js";
import { insertNewRun } from "../lifecycle.js";
import { DEFAULT_CONTROL_LIMITS, defaultFixturesDir, type RunServiceOptions } from "../options.js";
import { createBinding } from "../recovery/binding.js";
import type { CreateRunInput, RunView } from "../service.js";
import { toolContextOf } from "../tool-context.js";
import { checkCreateInput } from "./check-input.js";
import { checkDependenciesPresent } from "./dependency-check.js";
import { initialState } from "./initial-state.js";
import { materializeWorkspace } from "./materialize.js";
import { runCreatedEvent, runRecordOf } from "./record.js";

/** What creating a run needs of the run service it belongs to. */
export interface CreateRunPorts {
  deps: RuntimeDeps;
  stateDir: string;
  options: RunServiceOptions;
  orchestrators: Orchestrators;
  /** workspaces being claimed by a createRun in progress: a second one on the same folder is refused, not queued */
  claims: Set<string>;
  liveModel(runId: string, task: RunRecord["task"], backend: RunRecord["backend"], runtime?: RunRecord["runtime"]): Promise<Model>;
  /** hands the created run to its driver */
  start(runId: string, model: Model): void;
  view(runId: string): RunView;
}

/**
 * Creates a run: every check that may refuse it runs before anything exists
 * (checkCreateInput, then the copy limits, the control dir, the executor's
 * preflight, the orchestrator, the model), and a refusal after the first write
 * removes what was made, so a refused run leaves nothing behind.
 */
export async function createRun(p: CreateRunPorts, input: CreateRunInput): Promise<RunView> {
  const { deps, options } = p;
  const checked = checkCreateInput(input, options.builtinFixturesDir ?? defaultFixturesDir(), options.policy);
  const ws = checked.workspace;
  if (p.claims.has(ws) || deps.ledger.activeRunFor(ws)) throw busy(ws, deps.ledger.activeRunFor(ws));
  p.claims.add(ws);
  let createdWorkspace = false;
  let staging: string | null = null;
  let controlDir: string | null = null;
  let inserted = false;
  try {
    // before anything is copied (fixture repo/ → workspace, workspace → baseline and sandboxes): the figure, the limit, the flag
    const limits = { ...(options.copyLimits ?? COPY_LIMITS), ...(input.copyLimits ?? {}) };
    if (checked.fixtureDir) await checkCopySize(path.join(checked.fixtureDir, "repo"), "fixture repo/", limits);
    else await checkCopySize(ws, "workspace", limits);
    const runId = newRunId();
    // walked (async, within limits, regular files and folders only) before anything exists; copied below
    const control = checked.taskControlDir
      ? await checkControlDir(checked.taskControlDir, { stateDir: p.stateDir, workspace: ws, limits: options.controlLimits ?? DEFAULT_CONTROL_LIMITS })
      : null;
    // each may refuse (backend unavailable, image missing, live gate closed): before anything exists
    const executor = options.executorFactory(input.backend, taskImageFamily(checked.task), input.runtime);
    await executor.preflight();
    // the programs on the image's PATH (read once per image, while the steps below run): the allowlist offers only
    // what the run's image has, and a command naming another program is refused (policy/image-programs.ts).
    // Not readable (an engine error): the run keeps the policy as resolved, as before images were read
    const programsRead = (executor.programs?.() ?? Promise.resolve(null)).catch(() => null);
    // loaded before anything exists: a framework that cannot load refuses the run, and the trace names what ran
    const orchestrator = await p.orchestrators.get(input.orchestrator ?? DEFAULT_ORCHESTRATOR);
    // the replay was parsed by checkCreateInput; its cursor is read from the ledger at each turn
    const model: Model = checked.replay
      ? new ReplayModel(checked.replay.file, () => deps.ledger.getRun(runId).replay_cursor)
      : await p.liveModel(runId, checked.task, input.backend, input.runtime);
    if (checked.fixtureDir) {
      await materializeWorkspace(checked.fixtureDir, ws);
      createdWorkspace = true;
    }
    const workspace = fs.realpathSync(ws);
    const holder = deps.ledger.activeRunFor(workspace);
    if (holder) throw busy(workspace, holder);
    // built once per key and kept for the life of the run (its Verifier and a resume use the same ones);
    // a venv of another Python than the image's is refused here, before anything of the run exists
    const layers = (await executor.prepareLayers?.(workspace, { forbidden: checked.task.forbidden, include: checked.sandboxInclude })) ?? [];
    // in a sandbox (the host's own node_modules serves a local run), a runner from node_modules needs its layer
    if (executor.prepareLayers) checkDependenciesPresent(checked.task, layers, workspace);

    // staged, then renamed into place: a half-copied control dir never carries the run's name
    const controlRoot = statePath(p.stateDir, "controlRoot");
    await fs.promises.mkdir(controlRoot, { recursive: true, mode: 0o700 });
    staging = path.join(controlRoot, stagingName(runId));
    await fs.promises.mkdir(staging, { mode: 0o700 });
    if (control) await copyControlDir(control, path.join(staging, "acceptance"));
    controlDir = path.join(controlRoot, runId);
    await fs.promises.rename(staging, controlDir);
    staging = null;
    const policy = policyForImage(checked.policy.effective, taskImageFamily(checked.task), await programsRead);
    const prepared = { checked, workspace, controlDir, layers, policy, orchestrator };
    const record = runRecordOf(input, prepared);
    await deps.tools.captureBaseline(toolContextOf(record, () => deps.ledger.knownSecrets()));
    // built once for every run, replay and live alike; kept in the control dir so a resume tells the model the same bytes
    const projectContext = await prepareProjectContext({ workspaceRoot: workspace, controlDir, forbidden: checked.task.forbidden });
    const binding = createBinding({ runId, workspace, controlDir, stateDir: p.stateDir });
    deps.ledger.tx(() => {
      insertNewRun(deps, { run_id: runId, created_at: deps.clock.now(), record, state: initialState() });
      deps.ledger.insertBinding(binding);
      deps.trace.append(runId, runCreatedEvent(input, prepared, record));
      deps.trace.append(runId, { type: "project_context", payload: projectContext });
    });
    inserted = true;
    deps.logger.info(
      {
        runId,
        backend: input.backend,
        ...(input.runtime !== undefined && { runtime: input.runtime }),
        model: input.model,
        ...(checked.sandboxInclude.length > 0 && { sandbox_include: checked.sandboxInclude }),
      },
      "run created",
    );
    p.start(runId, model);
    return p.view(runId);
  } catch (err) {
    if (!inserted) {
      // a refused run leaves nothing behind
      for (const dir of [createdWorkspace ? ws : null, staging, controlDir]) if (dir) await fs.promises.rm(dir, { recursive: true, force: true });
    }
    if (isMiniAgentError(err)) throw err;
    deps.logger.error({ err }, "run creation failed");
    throw new MiniAgentError("internal", "the run could not be created (see the daemon log)", { cause: err });
  } finally {
    p.claims.delete(ws);
  }
}

function busy(workspace: string, holder: string | null): MiniAgentError {
  return new MiniAgentError("workspace_busy", `workspace is in use by ${holder ?? "a run being created"}; one active run per workspace`, {
    details: { workspace: path.basename(workspace), run_id: holder },
  });
}

function newRunId(): string {
  return `run_${crypto.randomUUID().replace(/-/g, "").slice(0, 20)}`;
}
