import type { ToolResult } from "../contracts/tool-call.js";
import { checkCommandApproval } from "../policy/approvals.js";
import { decideCall } from "../policy/decide-call.js";
import { policyOf } from "../policy/effective.js";
import { prepareCommand } from "../tools/command-action.js";
import { toolsOffered } from "../tools/descriptions.js";
import { errorResult } from "../tools/result.js";
import type { ValidatedToolCall } from "../tools/validate.js";
import type { PreparedCommand } from "../contracts/tool-call.js";
import type { ActiveRun } from "./active-run.js";
import type { RuntimeDeps } from "./deps.js";
import { moveRun } from "./lifecycle.js";

type CommandCall = Extract<ValidatedToolCall, { name: "run_command" }>;

/** What the trace records of every run_command call, whatever happens to it. */
export interface CommandTrace extends Record<string, unknown> {
  argv: string[];
  /** allow | ask | deny from the policy; `unavailable` on a backend without a sandbox */
  decision: "allow" | "ask" | "deny" | "unavailable";
  /** the rule that decided, e.g. `policy:interactive:deny_token:curl` */
  rule: string;
  /** set when an ask was answered by the user */
  approved_by?: "user";
  action_id?: string;
}

export type CommandGate =
  /** the command may run now, in the run's sandbox */
  | { kind: "run"; trace: CommandTrace }
  /** nothing ran and nothing will: the model is told why */
  | { kind: "refused"; result: ToolResult; trace: CommandTrace }
  /** persisted as a pending action; the run waits for the user */
  | { kind: "awaiting_approval" };

/**
 * Whether a proposed command runs, BEFORE anything runs (no sandbox is opened
 * or synced for a refusal): the backend must have a sandbox, then the run's
 * policy decides (policy/decide-call.ts, the one home of every decision). deny is final; allow runs; ask runs only once the user has
 * approved this exact call (same run, call, arguments and workspace digest,
 * sealed approval), else it becomes the run's pending action. A resumed run
 * that finds an approved command unanswered (the daemon died while it ran)
 * comes through here again: the policy and the binding are re-checked and it
 * runs again; a command never changes the workspace, so that is safe.
 */
export async function commandGate(deps: RuntimeDeps, active: ActiveRun, call: CommandCall, why: string | null): Promise<CommandGate> {
  const id = call.call.call_id;
  const argv = [...call.args.argv];
  const backend = deps.ledger.getRun(active.runId).record.backend;
  if (!toolsOffered(backend).includes("run_command") || active.executor.kind !== "container") {
    const trace: CommandTrace = { argv, decision: "unavailable", rule: `backend:${backend}` };
    const message = `run_command is not offered on the ${backend} backend: commands run only in a container sandbox, never on the host`;
    return { kind: "refused", result: errorResult(id, "tool_unavailable", message), trace };
  }
  // the one policy decision (policy/decide-call.ts -> decide-command.ts)
  const policy = decideCall("run_command", call.args, active.ctx.task, policyOf(active.ctx));
  const rule = policy.rule ?? "task";
  const trace: CommandTrace = { argv, decision: policy.verdict, rule };
  if (policy.verdict === "deny") return { kind: "refused", result: errorResult(id, policy.code ?? "policy_denied", policy.reason), trace };
  if (policy.verdict === "allow") return { kind: "run", trace };

  const digest = await deps.tools.workspaceDigest(active.ctx);
  const prepared = prepareCommand({ runId: active.runId, callId: id, args: call.args, workspaceDigest: digest, rule });
  const row = deps.ledger.findAction(active.runId, prepared.action_id);
  if (row?.status === "approved") {
    const stored = deps.ledger.findApproval(active.runId, prepared.action_id);
    const check = checkCommandApproval(stored, { runId: active.runId, command: row.record.prepared, workspaceDigest: digest }, await deps.approvalKey());
    const approved: CommandTrace = { ...trace, approved_by: "user", action_id: prepared.action_id };
    if (check.ok) return { kind: "run", trace: approved };
    return { kind: "refused", result: errorResult(id, check.code, `${check.message}; the command did not run`), trace: approved };
  }
  proposeCommand(deps, active, prepared, why);
  await active.closeSession();
  return { kind: "awaiting_approval" };
}

/** The ask: the command is persisted as the run's pending action, with approval_requested, before anyone is asked. */
function proposeCommand(deps: RuntimeDeps, active: ActiveRun, c: PreparedCommand, why: string | null): void {
  deps.ledger.tx(() => {
    if (!deps.ledger.findAction(active.runId, c.action_id)) {
      deps.ledger.insertAction({
        schema_version: 1,
        run_id: active.runId,
        action_id: c.action_id,
        call_id: c.call_id,
        tool: c.tool,
        // a command has no path, file versions or diff: the write columns hold neutral values
        path: "",
        args: c.arguments,
        args_digest: c.args_digest,
        workspace_digest: c.workspace_digest,
        before_hash: "absent",
        after_hash: "",
        manifest_digest: c.workspace_digest,
        diff: "",
        why,
        prepared: c,
      });
    }
    moveRun(deps, active.runId, "awaiting_approval", `approval needed for ${c.action_id} (run_command, asked by ${c.rule})`, {
      state: (s) => {
        s.pending_action_id = c.action_id;
        s.last_tool = "run_command";
        s.counters.elapsed_ms = active.elapsedMs();
      },
    });
    deps.trace.append(active.runId, {
      type: "approval_requested",
      call_id: c.call_id,
      action_id: c.action_id,
      payload: { tool: c.tool, argv: c.arguments.argv, decision: "ask", rule: c.rule, workspace_digest: c.workspace_digest },
    });
  });
}

/** The executed command's figures for its tool_observed event (its argv, decision and rule come from the gate). */
export function commandFigures(r: ToolResult): Record<string, unknown> {
  const d = r.data !== null && typeof r.data === "object" ? (r.data as Record<string, unknown>) : {};
  const pick = (k: string) => (k in d ? { [k]: d[k] } : {});
  const changed = d.changed_in_sandbox as { paths?: unknown[] } | undefined;
  return {
    ...pick("exit_code"),
    ...pick("duration_ms"),
    ...pick("stdout_bytes"),
    ...pick("stderr_bytes"),
    ...pick("limits"),
    output_cut: d.truncated === true,
    ...(Array.isArray(changed?.paths) && { changed_in_sandbox: changed.paths.length }),
  };
}
