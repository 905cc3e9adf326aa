import { decideCall } from "../policy/decide-call.js";
import { policyOf } from "../policy/effective.js";
import { commitPreparedAction, prepareApplyPatch, verifyPreparedAction } from "../tools/apply-patch.js";
import type { ToolContext } from "../tools/context.js";
import { errorResult } from "../tools/result.js";
import { runCommand } from "../tools/run-command.js";
import { runTests } from "../tools/run-tests.js";
import { runReadOnlyTool } from "../tools/index.js";
import { workspaceDiff } from "../tools/show-diff.js";
import { validateToolCall } from "../tools/validate.js";
import { captureBaseline } from "../workspace/baseline.js";
import { createForbiddenMatcher } from "../workspace/forbidden.js";
import { currentFileVersion, workspaceDigest } from "../workspace/version.js";
import type { ActiveToolContext, ToolPort } from "./ports.js";
import { baselineTests, NO_BASELINE_STORE } from "../verifier/baseline-tests.js";
import { VERIFIER_DEFAULTS } from "../verifier/verify.js";
import { exportSpecOf } from "../tools/context.js";
import { loadBaseline } from "../workspace/baseline.js";
import type { BaselineTests } from "../tools/test-verdict.js";

/** The real tools, policy and workspace functions, bound to the runtime's port. */
export function defaultToolPort(): ToolPort {
  return {
    validate: validateToolCall,
    classify: (call, ctx) => decideCall(call.name, call.args, ctx.task, policyOf(ctx)),
    async run(call, ctx) {
      switch (call.name) {
        case "read_file":
        case "search":
        case "list_files":
        case "show_diff":
          return runReadOnlyTool(call, ctx);
        case "run_tests":
          // the run's warm sandbox; the Verifier alone uses fresh containers
          return runTests(call.call.call_id, call.args, { ...ctx, runner: await ctx.session(), baseline: (preset) => runBaselineTests(ctx, preset) });
        case "run_command":
          // the command policy has allowed it (runtime/command-step.ts); only ever the run's warm sandbox
          return runCommand(call.call.call_id, call.args, { ...ctx, session: await ctx.session() });
        case "apply_patch":
          return errorResult(call.call.call_id, "approval_required", "writes go through approval");
      }
    },
    prepare: async (call, ctx, runId) =>
      call.name === "apply_patch"
        ? prepareApplyPatch(call.call.call_id, call.args, ctx, runId)
        : { ok: false, result: errorResult(call.call.call_id, "invalid_fields", `${call.name} does not write`) },
    verifyRecord: verifyPreparedAction,
    commit: commitPreparedAction,
    fileVersion: (rel, ctx: ToolContext) =>
      currentFileVersion(ctx.workspaceRoot, rel, { forbidden: createForbiddenMatcher(ctx.task.forbidden), controlDir: ctx.controlDir }),
    workspaceDigest: (ctx) => workspaceDigest(ctx.workspaceRoot, ctx.controlDir),
    captureBaseline: async (ctx) => void (await captureBaseline(ctx.workspaceRoot, ctx.controlDir)),
    diff: async (ctx) => (await workspaceDiff(ctx)).diff,
  };
}

/** A preset's tests on the run's baseline copy, in a fresh sandbox, once per baseline: what run_tests judges against. */
async function runBaselineTests(ctx: ActiveToolContext, preset: string): Promise<BaselineTests> {
  const loaded = await loadBaseline(ctx.controlDir).catch(() => null);
  if (loaded === null) return { cases: null, note: "the run's baseline could not be loaded", cached: false };
  return baselineTests({
    runId: ctx.runId,
    task: ctx.task,
    preset,
    controlDir: ctx.controlDir,
    baselineDigest: loaded.manifest.digest,
    executor: ctx.executor,
    exportSpec: exportSpecOf(ctx),
    ...(ctx.onSandboxInclude && { onIncluded: ctx.onSandboxInclude }),
    limits: VERIFIER_DEFAULTS,
    outputCapBytes: VERIFIER_DEFAULTS.outputCapBytes,
    store: ctx.baselineTests ?? NO_BASELINE_STORE,
    signal: ctx.signal,
  });
}
