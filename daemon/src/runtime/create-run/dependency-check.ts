import type { TaskSpec } from "../../contracts/task-spec.js";
import type { DependencyLayerRef } from "../../contracts/sandbox.js";
import { MiniAgentError } from "../../errors.js";

/** A command word that runs a file of the workspace's node_modules (`node_modules/.bin/mocha`, `./node_modules/jest/bin/jest.js`). */
const IN_NODE_MODULES = /^(?:\.\/|\/workspace\/)?node_modules\//;

/**
 * A test preset or verify command that runs a program from node_modules cannot
 * start in a sandbox without the node_modules layer (the sandbox has no
 * network and no npm). Refused while the run is created, before anything of it
 * exists, naming the install that makes the layer; going on, it failed only at
 * its first run_tests, on a missing module.
 */
export function checkDependenciesPresent(task: TaskSpec, layers: readonly DependencyLayerRef[], workspace: string): void {
  if (layers.some((l) => l.folder === "node_modules")) return;
  const commands = [...Object.values(task.test_presets).map((p) => p.command), ...(task.verify_commands ?? []).map((c) => c.command)];
  const needs = commands.flat().find((w) => IN_NODE_MODULES.test(w));
  if (needs === undefined) return;
  throw new MiniAgentError(
    "invalid_workspace",
    `the tests run ${needs}, but this workspace has no node_modules and no dependency layer installed for its package.json; install one in the install sandbox first: mini-agent-client env build --workspace ${JSON.stringify(workspace)} --install "npm ci" (or "npm install" without a lock file; or this run's --install)`,
    { details: { workspace, needs } },
  );
}
