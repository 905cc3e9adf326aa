import type { RunRecord } from "../store/records.js";
import type { ToolContext } from "../tools/context.js";

/** What the tools know of a run, from its record: the one place a ToolContext is made from a run. */
export function toolContextOf(record: RunRecord, knownSecrets?: () => readonly string[]): ToolContext {
  return {
    ...(knownSecrets && { knownSecrets }),
    task: record.task,
    workspaceRoot: record.workspace,
    controlDir: record.control_dir,
    sandboxInclude: record.sandbox_include ?? [],
    ...(record.dependency_layers && { dependencyLayers: record.dependency_layers }),
    ...(record.policy && { policy: record.policy }),
  };
}
