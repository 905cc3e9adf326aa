import fs from "node:fs/promises";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { ReplayFile } from "../contracts/decision.js";
import type { ToolResult } from "../contracts/tool-call.js";
import type { Executor, SandboxSession } from "../sandbox/executor.js";
import { bindingFor, checkApproval, signApproval } from "../policy/approvals.js";
import { classify } from "../policy/classify.js";
import { decideCases, parseAcceptanceOutput } from "../verifier/acceptance-protocol.js";
import { workspaceDigest } from "../workspace/version.js";
import { commitPreparedAction, prepareApplyPatch } from "./apply-patch.js";
import { runReadOnlyTool } from "./index.js";
import { runTests } from "./run-tests.js";
import { validateToolCall } from "./validate.js";
import type { ToolContext } from "./context.js";
import { errorResult } from "./result.js";

export interface ReplayStep {
  kind: "plan" | "tool" | "final";
  name?: string;
  verdict?: string;
  result?: ToolResult;
  wrote?: boolean;
}

/**
 * Drives a replay file through validate -> classify -> (approve) -> tool, the
 * way the runtime does, approving every `ask` with a sealed approval. For
 * tests of the fixtures and tools only; the real loop lives in runtime/.
 */
export async function driveReplay(replayPath: string, ctx: ToolContext, runner: Executor | SandboxSession, runId = "run_test"): Promise<ReplayStep[]> {
  const parsed = ReplayFile.safeParse(JSON.parse(await fs.readFile(replayPath, "utf8")));
  if (!parsed.success) throw new Error(`replay ${path.basename(replayPath)} is invalid`);
  const key = randomBytes(32);
  const steps: ReplayStep[] = [];
  for (const d of parsed.data.decisions) {
    if (d.kind !== "tool") {
      steps.push({ kind: d.kind });
      if (d.kind === "final") break;
      continue;
    }
    const v = validateToolCall(d.call);
    if (!v.ok) {
      steps.push({ kind: "tool", name: d.call.name, verdict: "invalid", result: v.result });
      continue;
    }
    const policy = classify(v.name, v.args, ctx.task);
    if (policy.verdict === "deny") {
      steps.push({ kind: "tool", name: v.name, verdict: "deny", result: errorResult(v.call.call_id, policy.code ?? "path_denied", policy.reason) });
      continue;
    }
    if (v.name === "apply_patch") {
      const p = await prepareApplyPatch(v.call.call_id, v.args, ctx, runId);
      if (!p.ok) {
        steps.push({ kind: "tool", name: v.name, verdict: policy.verdict, result: p.result });
        continue;
      }
      const approval = signApproval(bindingFor(runId, p.action), "approved", null, key);
      const check = checkApproval(approval, { runId, action: p.action, workspaceDigest: await workspaceDigest(ctx.workspaceRoot, ctx.controlDir) }, key);
      if (!check.ok) throw new Error(`fresh approval refused: ${check.message}`);
      const c = await commitPreparedAction(p.action, ctx);
      steps.push({ kind: "tool", name: v.name, verdict: policy.verdict, result: c.result, wrote: c.ok });
    } else if (v.name === "run_tests") {
      const result = await runTests(v.call.call_id, v.args, { ...ctx, runner, runId, timeoutMs: 120_000 });
      steps.push({ kind: "tool", name: v.name, verdict: policy.verdict, result });
    } else {
      steps.push({ kind: "tool", name: v.name, verdict: policy.verdict, result: await runReadOnlyTool(v, ctx) });
    }
  }
  return steps;
}

/** A step's tool data (run_tests counts, read_file version, …). */
export const stepData = (s: { result?: { data: unknown } }) => s.result?.data as Record<string, unknown>;

/**
 * The task's hidden acceptance exactly as its spec says, in a fresh sandbox of
 * `executor` with the fixture's control/ at /control, each case decided as the
 * Verifier decides it (the harness's verdict AND the host's expected answer).
 */
export async function fixtureAcceptance(
  fixtureDir: string,
  r: { ws: string; ctx: ToolContext },
  executor: Executor,
  timeoutMs = 60_000,
): Promise<{ status: number | null; cases: Record<string, boolean> }> {
  const spec = r.ctx.task.acceptance!;
  const res = await executor.run({
    runId: "run_acceptance",
    purpose: "acceptance",
    argv: spec.command,
    workspaceDir: r.ws,
    controlDir: path.join(fixtureDir, "control"),
    timeoutMs,
  });
  const parsed = parseAcceptanceOutput(res.stdout, spec.cases);
  if (!parsed.ok) throw new Error(`${parsed.error}\n${res.stderr.slice(-500)}`);
  const decided = decideCases(parsed.cases, spec.expected);
  return { status: res.exit_code, cases: Object.fromEntries(spec.cases.map((id) => [id, decided.passed.includes(id)])) };
}
