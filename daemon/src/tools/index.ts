/**
 * The tools and their protocol: the public surface the runtime calls.
 *
 *   validateToolCall(raw: unknown): ValidationOutcome
 *       pure trust boundary: {ok:true, call, name, args} (fresh copy) | {ok:false, result: ToolResult}
 *       unknown_tool / invalid_fields (with the zod path); no side effects.
 *   classify(name, args, task): PolicyDecision                       (policy/classify.ts)
 *       {verdict: "allow"|"ask"|"deny", code, reason}; deny > ask > allow.
 *   runReadOnlyTool(v: ValidatedToolCall, ctx: ToolContext): Promise<ToolResult>
 *       read_file | search | list_files | show_diff (anything else -> invalid_fields).
 *   prepareApplyPatch(callId, args, ctx, runId): Promise<{ok:true, action: PreparedAction} | {ok:false, result}>
 *       the contract, no write; PreparedAction (contracts/tool-call.ts) is what the ledger stores.
 *       action_id = actionIdFor({runId, callId, name, normalized args, workspace digest}): unique across runs,
 *       reproduced by a replayed or resumed run.
 *   verifyPreparedAction(raw): re-derives id and digests from a stored record (tamper check).
 *   commitPreparedAction(action, ctx): Promise<{ok:true, receipt: WriteReceipt, result} | {ok:false, result}>
 *       re-checks record, path, workspace digest, before-hash; temp in control dir, fsync, rename, fsync dir.
 *       Record the intent BEFORE and the receipt AFTER this call.
 *   runTests(callId, args, ctx: RunTestsContext): Promise<ToolResult>
 *       presets only; files expanded host-side; runner is an Executor or a SandboxSession.
 *   runCommand(callId, args, ctx: RunCommandContext): Promise<ToolResult>                 (tools/run-command.ts)
 *       run_command once the command policy allowed it: the run's warm sandbox only, run_tests' limits
 *       and output tails, `changed_in_sandbox` listed and discarded. prepareCommand / verifyPreparedCommand
 *       (tools/command-action.ts): the record a command's approval binds to. toolsOffered(backend):
 *       run_command only where there is a container sandbox.
 *   presetInvocation(task, preset, workspaceRoot, controlDir?) / summarizeTestRun(result, limits)
 *       the same argv for the Verifier; normalizeRunnerText(text) folds sandbox copy paths and drops timings.
 *   judgeTestRun(runFacts, summary): TestVerdict                        (tools/test-verdict.ts)
 *       THE green/red rule for run_tests and the Verifier; a skipped or todo test is not a pass;
 *       every parser produces a TestSummary and is judged by it.
 *   parseNodeTestOutput(stdout, opts?): TestOutputSummary               (tools/test-output.ts)
 *   parserFor(kind)(evidence, opts?): TestReportSummary               (tools/parsers/: node_test, junit_xml, go_test_json)
 *   toolDescriptions(): OpenAiTool[]                                  generated from the zod schemas.
 *   workspaceDiff(ctx): Promise<WorkspaceDiff>                        the diff against the baseline.
 *
 * Approvals (policy/approvals.ts): bindingFor(runId, action), signApproval(binding, decision, reason, key),
 * checkApproval(stored, {runId, action, workspaceDigest}, key) -> {ok:true} | {ok:false, code: approval_stale|approval_unknown|approval_rejected};
 * loadOrCreateApprovalKey(statePath(stateDir, "approvalKey")).
 * Workspace (workspace/): resolveSafePath, computeManifest, captureBaseline/loadBaseline,
 * workspaceDigest(root, controlDir), currentFileVersion(root, rel) for three-state recovery.
 *
 * Every ToolContext carries the task, the workspace root and the run's control dir
 * (outside the workspace). Results never contain host absolute paths.
 */
import type { ToolResult } from "../contracts/tool-call.js";
import type { ToolContext } from "./context.js";
import { listFilesTool } from "./list-files.js";
import { readFileTool } from "./read-file.js";
import { errorResult } from "./result.js";
import { searchTool } from "./search.js";
import { showDiffTool } from "./show-diff.js";
import type { ValidatedToolCall } from "./validate.js";

export { validateToolCall, type ValidatedToolCall, type ValidationOutcome } from "./validate.js";
export {
  prepareApplyPatch,
  commitPreparedAction,
  verifyPreparedAction,
  actionIdFor,
  argsDigest,
  type ActionIdInput,
  unifiedDiff,
  type PrepareOutcome,
  type CommitOutcome,
} from "./apply-patch.js";
export {
  runTests,
  presetInvocation,
  summarizeTestRun,
  normalizeRunnerText,
  type RunTestsContext,
  type PresetInvocation,
  type TestRunReport,
} from "./run-tests.js";
export { parseNodeTestOutput, type TestOutputSummary, type TestFailure } from "./test-output.js";
export {
  parserFor,
  type TestReportParser,
  type RunnerEvidence,
  type TestReportSummary,
  type RefusalKind,
  type ReportFile,
  type ReportFileReader,
} from "./parsers/index.js";
export { judgeTestRun, type TestRunFacts, type TestSummary, type TestVerdict, type TestVerdictKind } from "./test-verdict.js";
export { toolDescriptions, type OpenAiTool } from "./descriptions.js";
export { workspaceDiff, type WorkspaceDiff } from "./show-diff.js";
export { toolEnv, type ToolContext } from "./context.js";
export { DEFAULT_TOOL_LIMITS, resolveLimits, type ToolLimits } from "./limits.js";
export { readFileTool } from "./read-file.js";
export { searchTool } from "./search.js";
export { listFilesTool } from "./list-files.js";
export { showDiffTool } from "./show-diff.js";

/** Tools that cannot change the workspace: no approval, no intent record. */
export const READ_ONLY_TOOLS = ["read_file", "search", "list_files", "show_diff"] as const;

export async function runReadOnlyTool(v: ValidatedToolCall, ctx: ToolContext): Promise<ToolResult> {
  const id = v.call.call_id;
  switch (v.name) {
    case "read_file":
      return readFileTool(id, v.args, ctx);
    case "search":
      return searchTool(id, v.args, ctx);
    case "list_files":
      return listFilesTool(id, v.args, ctx);
    case "show_diff":
      return showDiffTool(id, ctx);
    default:
      return errorResult(id, "invalid_fields", `${v.name} is not a read-only tool`);
  }
}
