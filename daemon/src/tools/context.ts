import type { EffectivePolicy } from "../contracts/policy.js";
import type { DependencyLayerRef, ExportSpec } from "../contracts/sandbox.js";
import type { TaskSpec } from "../contracts/task-spec.js";
import fs from "node:fs";
import path from "node:path";
import { createForbiddenMatcher, globMatcher, type Matcher } from "../workspace/forbidden.js";
import { isDependencyPath } from "../workspace/dependency-dirs.js";
import { resolveLimits, type ToolLimits } from "./limits.js";

/** What every tool needs to know about the run. Paths are host paths; they never appear in results. */
export interface ToolContext {
  task: TaskSpec;
  workspaceRoot: string;
  /** the run's control dir (state dir, outside the workspace): baseline, temp files for writes */
  controlDir: string;
  limits?: Partial<ToolLimits>;
  /**
   * the run's `--sandbox-include` globs: forbidden paths the sandbox may still
   * see (never the model through read_file or search)
   */
  sandboxInclude?: readonly string[];
  /** the run's dependency layers (RunRecord.dependency_layers): mounted read-only in its sandboxes, never copied */
  dependencyLayers?: readonly DependencyLayerRef[];
  /** the run's resolved policy (RunRecord.policy); absent: the built-in `interactive` (policy/effective.ts policyOf) */
  policy?: EffectivePolicy;
  /** the daemon's live credentials, for what a tool keeps outside the ledger (the full test output) */
  knownSecrets?: () => readonly string[];
}

/** What of the workspace may be copied into this run's sandboxes: the task's forbidden globs and the run's opt-ins. */
export function exportSpecOf(ctx: Pick<ToolContext, "task" | "sandboxInclude" | "dependencyLayers">): ExportSpec {
  return { forbidden: ctx.task.forbidden, include: ctx.sandboxInclude ?? [], ...(ctx.dependencyLayers?.length && { layers: ctx.dependencyLayers }) };
}

export interface ToolEnv {
  forbidden: Matcher;
  writable: Matcher;
  creatable: Matcher;
  limits: ToolLimits;
}

/** Matchers and limits derived from the task, computed the same way for tools and policy. */
export function toolEnv(ctx: Pick<ToolContext, "task" | "limits"> & Partial<Pick<ToolContext, "workspaceRoot">>): ToolEnv {
  const writable = globMatcher(ctx.task.writable);
  // a dependency folder is never written, whatever `writable` says: it is the run's read-only layer
  const hasGoMod = ctx.workspaceRoot !== undefined && fs.existsSync(path.join(ctx.workspaceRoot, "go.mod"));
  return {
    forbidden: createForbiddenMatcher(ctx.task.forbidden),
    writable: (rel) => !isDependencyPath(rel, hasGoMod) && writable(rel),
    creatable: globMatcher(ctx.task.creatable),
    limits: resolveLimits(ctx.limits),
  };
}
