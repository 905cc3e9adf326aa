import fs from "node:fs";
import path from "node:path";
import type { DependencyLayerRef, ExportSpec } from "../contracts/sandbox.js";
import picomatch from "picomatch";
import type { TaskSpec, TestPreset } from "../contracts/task-spec.js";
import { exportSpecOf } from "../tools/context.js";
import type { PresetInvocation } from "../tools/run-tests.js";
import { walkTree } from "../workspace/walk.js";

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

/**
 * The verify preset's argv with the hidden test files its `files` globs match
 * added: run_tests expands the globs over the workspace (tools/run-tests.ts
 * presetInvocation), where a test file only the hidden tests add is not, so a
 * `node --test tests/*.test.js` preset would never run it. Links and special
 * files are left to the overlay's own refusal (sandbox-export.ts).
 */
export async function withHiddenTestFiles(
  inv: PresetInvocation | null,
  preset: TestPreset | undefined,
  overlay: string | undefined,
): Promise<PresetInvocation | null> {
  if (inv === null || preset === undefined || overlay === undefined || preset.files.length === 0) return inv;
  const hidden = (await walkTree(overlay)).filter((e) => e.type === "file").map((e) => e.rel);
  const added: string[] = [];
  for (const glob of preset.files) {
    const isMatch = picomatch(glob, { dot: false });
    for (const rel of hidden) if (isMatch(rel) && !inv.files.includes(rel) && !added.includes(rel)) added.push(rel);
  }
  if (added.length === 0) return inv;
  return {
    ...inv,
    argv: [...inv.argv, ...added],
    files: [...inv.files, ...added],
    unmatched_globs: inv.unmatched_globs.filter((g) => !added.some((rel) => picomatch(g, { dot: false })(rel))),
  };
}
