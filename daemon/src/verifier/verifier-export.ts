import fs from "node:fs";
import path from "node:path";
import type { DependencyLayerRef, ExportSpec } from "../contracts/sandbox.js";
import type { TaskSpec } from "../contracts/task-spec.js";
import { exportSpecOf } from "../tools/context.js";

/**
 * What the Verifier's fresh sandboxes get: exactly run_tests' export rule
 * (tools/context.ts), plus, for a task with `hidden_tests`, that folder of
 * the control dir laid over the workspace copy. Only here: run_tests' and
 * run_command's sandboxes never see the hidden tests, and they are never
 * written into the workspace, so the model cannot read or tune to them.
 *
 * `refusal` is set (and `spec` has no overlay) when the folder cannot be
 * used: the run then fails as verification_error:<refusal>, never as a run
 * judged without its hidden tests.
 */
export interface VerifierExport {
  spec: ExportSpec;
  refusal: string | null;
}

export function verifierExport(input: {
  task: TaskSpec;
  acceptanceDir: string | null;
  sandboxInclude?: readonly string[];
  dependencyLayers?: readonly DependencyLayerRef[];
}): VerifierExport {
  const spec = exportSpecOf({ task: input.task, sandboxInclude: input.sandboxInclude, dependencyLayers: input.dependencyLayers });
  const rel = input.task.hidden_tests;
  if (rel === undefined) return { spec, refusal: null };
  if (input.acceptanceDir === null) return { spec, refusal: "hidden_tests_missing" };
  const overlay = path.join(input.acceptanceDir, rel);
  // the schema keeps `..` out; a link on the way (control/tests -> /etc) is caught by the real path
  const inside = (() => {
    try {
      const root = fs.realpathSync(input.acceptanceDir);
      const real = fs.realpathSync(overlay);
      return real.startsWith(root + path.sep) && fs.lstatSync(overlay).isDirectory();
    } catch {
      return false;
    }
  })();
  return inside ? { spec: { ...spec, overlay }, refusal: null } : { spec, refusal: "hidden_tests_missing" };
}
