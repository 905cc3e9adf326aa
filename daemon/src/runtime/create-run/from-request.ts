import type { Draft, DraftInput, TaskDrafter } from "../../adhoc/index.js";
import type { CreateRunRequest } from "../../contracts/api.js";
import { MiniAgentError } from "../../errors.js";
import type { LiveGate } from "../../gate/port.js";
import { requireImageFamily } from "../../sandbox/families.js";
import type { CreateRunInput, RunService, RunView } from "../service.js";
import { fixtureImageFamily } from "./check-input.js";

/** What creating a run from an API request needs: the drafter, the live gate and the run service. */
export interface CreateRunFromRequestPorts {
  runService: Pick<RunService, "createRun">;
  drafter: TaskDrafter;
  liveGate: LiveGate;
}

/**
 * `POST /v1/runs`, after its body was parsed: the ad-hoc task (the kept draft
 * the user was shown, or one drafted now), then the live gate, then the run.
 * Each step refuses before the next starts, so a refusal changes nothing.
 */
export async function createRunFromRequest(p: CreateRunFromRequestPorts, r: CreateRunRequest): Promise<RunView> {
  // an ad-hoc task first: drafting only reads the folder, its refusals are typed and change nothing,
  // and the task's image family (which the live gate is about) is known only once it is drafted
  const drafted = r.adhoc ? await adhocDraft(p.drafter, r, r.adhoc) : null;
  if (r.model === "live") await passLiveGate(p.liveGate, r, drafted);
  return p.runService.createRun(createInputOf(r, drafted));
}

function adhocDraft(drafter: TaskDrafter, r: CreateRunRequest, adhoc: NonNullable<CreateRunRequest["adhoc"]>): Draft | Promise<Draft> {
  const { draft_id, ...typed } = adhoc;
  const input: DraftInput = { workspace: r.workspace, ...typed, ...(r.image_family !== undefined && { imageFamily: r.image_family }) };
  // the draft the user was shown runs as it is, or not at all (adhoc/kept-drafts.ts)
  return draft_id !== undefined ? drafter.take(draft_id, input) : drafter.draft(input);
}

/** Issue 6: the gate fires before anything is prepared, so a refused live run touches nothing. */
async function passLiveGate(gate: LiveGate, r: CreateRunRequest, draft: Draft | null): Promise<void> {
  // the run's family: --image-family, else the drafted, given or fixture task's (absent: the configured one)
  const family =
    r.image_family !== undefined
      ? requireImageFamily(r.image_family)
      : (draft?.task.image_family ?? r.task_spec?.image_family ?? (r.fixture_dir !== undefined ? fixtureImageFamily(r.fixture_dir) : undefined));
  // keyed by family AND runtime: a report proven under runc says nothing about a runsc sandbox
  const verdict = await gate.check({ backend: r.backend, ...(family !== undefined && { family }), ...(r.runtime !== undefined && { runtime: r.runtime }) });
  if (!verdict.ok) {
    const why = verdict.message ? `: ${verdict.message}` : "";
    throw new MiniAgentError(
      "isolation_unverified",
      `live model refused: isolation unverified (${verdict.reason})${why}; refresh with: ${verdict.refresh_command}`,
      { details: { reason: verdict.reason, refresh_command: verdict.refresh_command } },
    );
  }
}

/** The request in the run service's words; an ad-hoc run's task is the draft's. */
function createInputOf(r: CreateRunRequest, draft: Draft | null): CreateRunInput {
  return {
    workspace: draft?.workspace ?? r.workspace,
    model: r.model,
    trustReplayFile: r.trust_replay_file,
    backend: r.backend,
    ...(r.runtime !== undefined && { runtime: r.runtime }),
    ...(r.fixture_dir !== undefined && { fixtureDir: r.fixture_dir }),
    ...(r.task_spec !== undefined && { taskSpec: r.task_spec }),
    ...(r.control_dir !== undefined && { controlDir: r.control_dir }),
    ...(r.replay_path !== undefined && { replayPath: r.replay_path }),
    ...(r.budgets !== undefined && { budgets: r.budgets }),
    ...(r.sandbox_include.length > 0 && { sandboxInclude: r.sandbox_include }),
    ...(r.image_family !== undefined && !draft && { imageFamily: r.image_family }),
    ...(r.policy_profile !== undefined && { policyProfile: r.policy_profile }),
    ...(r.orchestrator !== undefined && { orchestrator: r.orchestrator }),
    ...((r.max_workspace_bytes !== undefined || r.max_workspace_files !== undefined) && {
      copyLimits: {
        ...(r.max_workspace_bytes !== undefined && { maxBytes: r.max_workspace_bytes }),
        ...(r.max_workspace_files !== undefined && { maxFiles: r.max_workspace_files }),
      },
    }),
    ...(draft && { taskSpec: draft.task, adhoc: { testSource: draft.test_source, dirtyFiles: draft.dirty_files } }),
  };
}
