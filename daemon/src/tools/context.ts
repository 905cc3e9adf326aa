import type { EffectivePolicy } from "../contracts/policy.js";
import type { ExportSpec } from "../contracts/sandbox.js";
import type { TaskSpec } from "../contracts/task-spec.js";
import { createForbiddenMatcher, globMatcher, type Matcher } from "../workspace/forbidden.js";
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
  /** the run's resolved policy (RunRecord.policy); absent: the built-in `interactive` (policy/effective.ts policyOf) */
  policy?: EffectivePolicy;
}

/** What of the workspace may be copied into this run's sandboxes: the task's forbidden globs and the run's opt-ins. */
export function exportSpecOf(ctx: Pick<ToolContext, "task" | "sandboxInclude">): ExportSpec {
  return { forbidden: ctx.task.forbidden, include: ctx.sandboxInclude ?? [] };
}

export interface ToolEnv {
  forbidden: Matcher;
  writable: Matcher;
  creatable: Matcher;
  limits: ToolLimits;
}

/** Matchers and limits derived from the task, computed the same way for tools and policy. */
export function toolEnv(ctx: Pick<ToolContext, "task" | "limits">): ToolEnv {
  return {
    forbidden: createForbiddenMatcher(ctx.task.forbidden),
    writable: globMatcher(ctx.task.writable),
    creatable: globMatcher(ctx.task.creatable),
    limits: resolveLimits(ctx.limits),
  };
}
