import { taskImageFamily } from "../../contracts/task-spec.js";
import type { TraceEventInput } from "../../contracts/trace-event.js";
import type { RunRecord } from "../../store/records.js";
import type { DependencyLayerRef } from "../../contracts/sandbox.js";
import type { Orchestrator } from "../../orchestrators/orchestrator.js";
import type { CreateRunInput } from "../service.js";
import type { CheckedCreate } from "./check-input.js";

/** What was settled before the record is written: each part may have refused the run, and none did. */
export interface Prepared {
  checked: CheckedCreate;
  workspace: string;
  controlDir: string;
  layers: DependencyLayerRef[];
  policy: RunRecord["policy"];
  orchestrator: Pick<Orchestrator, "name" | "package">;
}

/** The run's record: what it was started with, kept for its whole life (a resume and its Verifier read the same). */
export function runRecordOf(input: CreateRunInput, p: Prepared): RunRecord {
  const { checked, layers } = p;
  return {
    schema_version: 1,
    task: checked.task,
    workspace: p.workspace,
    control_dir: p.controlDir,
    fixture_dir: checked.fixtureDir,
    model: input.model,
    backend: input.backend,
    ...(input.runtime !== undefined && { runtime: input.runtime }),
    replay_path: checked.replay?.path ?? null,
    replay_trusted: checked.replay?.trusted ?? false,
    budgets: checked.budgets,
    ...(checked.sandboxInclude.length > 0 && { sandbox_include: checked.sandboxInclude }),
    ...(layers.length > 0 && { dependency_layers: layers }),
    ...(input.adhoc && { adhoc: { test_source: input.adhoc.testSource, dirty_files: input.adhoc.dirtyFiles } }),
    policy: p.policy,
    orchestrator: p.orchestrator.name,
  };
}

/** The run's first trace event: what a reader of the trace alone needs to know the run was started with. */
export function runCreatedEvent(input: CreateRunInput, p: Prepared, record: RunRecord): TraceEventInput {
  const { checked, layers, orchestrator } = p;
  return {
    type: "run_created",
    payload: {
      task: checked.task.name,
      model: input.model,
      backend: input.backend,
      // the run's own OCI runtime; absent: the daemon's
      ...(input.runtime !== undefined && { runtime: input.runtime }),
      image_family: taskImageFamily(checked.task),
      replay_trusted: record.replay_trusted,
      budgets: checked.budgets,
      // resolved once, here; the run keeps it (a later edit of a policy file never changes it)
      policy: checked.policy.trace,
      // who takes the turns, and the exact package that did
      orchestrator: { name: orchestrator.name, package: orchestrator.package.name, version: orchestrator.package.version },
      // the opt-in is part of what the run was started with; which paths it let in is traced as sandbox_include
      ...(checked.sandboxInclude.length > 0 && { sandbox_include: checked.sandboxInclude }),
      // which dependency folders enter its sandboxes as read-only layers, and by which key
      ...(layers.length > 0 && { dependency_layers: layers.map((l) => ({ folder: l.folder, key: l.key })) }),
      // an ad-hoc task was drafted by the daemon, not written by the user: the trace keeps what it was
      ...(input.adhoc && { task_spec: checked.task, test_source: input.adhoc.testSource, dirty_files: input.adhoc.dirtyFiles }),
    },
  };
}
