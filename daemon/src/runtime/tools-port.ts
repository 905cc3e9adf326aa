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
import { baselineTestsOf } from "../verifier/baseline-tests.js";
import { exportSpecOf } from "../tools/context.js";
import { loadBaseline } from "../workspace/baseline.js";
import type { BaselineTests } from "../tools/test-verdict.js";

/** The real tools, policy and workspace functions, bound to the runtime's port. */
export function defaultToolPort(): ToolPort {
  const runBaselineTests = baselineRunner();
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

/** Digests kept per control dir; a run's baseline is written once and never replaced, so a kept digest stays true. */
const KEPT_DIGESTS = 256;

/**
 * A preset's tests on the run's baseline copy, in a fresh sandbox, once per baseline: what run_tests judges against.
 * The baseline manifest is read (and its digest re-checked) once per run, not on every run_tests call: a
 * large workspace's manifest is most of what a cached baseline answer cost.
 */
function baselineRunner(): (ctx: ActiveToolContext, preset: string) => Promise<BaselineTests> {
  const digests = new Map<string, string>();
  return async (ctx, preset) => {
    let digest = digests.get(ctx.controlDir);
    if (digest === undefined) {
      const loaded = await loadBaseline(ctx.controlDir).catch(() => null);
      if (loaded === null) return { cases: null, note: "the run's baseline could not be loaded", cached: false };
      digest = loaded.manifest.digest;
      digests.set(ctx.controlDir, digest);
      // the oldest run's entry goes first: a daemon that ran many runs keeps a bounded map
      if (digests.size > KEPT_DIGESTS) digests.delete(digests.keys().next().value as string);
    }
    return baselineTestsOf(
      {
        runId: ctx.runId,
        task: ctx.task,
        controlDir: ctx.controlDir,
        baselineDigest: digest,
        executor: ctx.executor,
        exportSpec: exportSpecOf(ctx),
        ...(ctx.onSandboxInclude && { onIncluded: ctx.onSandboxInclude }),
        ...(ctx.baselineTests && { store: ctx.baselineTests }),
        signal: ctx.signal,
      },
      preset,
    );
  };
}
