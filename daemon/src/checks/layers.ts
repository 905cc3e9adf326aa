import type { Draft } from "../adhoc/index.js";
import type { DependencyLayerRef } from "../contracts/sandbox.js";
import type { Executor } from "../sandbox/executor.js";

/**
 * The workspace's dependency folders (node_modules, .venv, vendor) as the
 * read-only layers a run of it would mount: the executor's prepareLayers, with
 * the forbidden globs a run passes (a check has no --sandbox-include), built
 * once per key and shared with runs. Without them a check's baseline copy, which
 * never holds dependencies, ran the tests with no packages, so verify judged a
 * project with dependencies by import errors.
 */
export async function dependencyLayersFor(executor: Executor, draft: Pick<Draft, "workspace" | "task">): Promise<DependencyLayerRef[]> {
  return (await executor.prepareLayers?.(draft.workspace, { forbidden: draft.task.forbidden, include: [] })) ?? [];
}
