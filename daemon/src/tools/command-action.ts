import { describeZodError } from "../contracts/common.js";
import { PreparedCommand, type ToolArgs } from "../contracts/tool-call.js";
import { actionIdFor, argsDigest } from "./apply-patch.js";

/** The record a command's approval binds to; nothing runs when it is made. */
export function prepareCommand(input: {
  runId: string;
  callId: string;
  args: ToolArgs<"run_command">;
  workspaceDigest: string;
  rule: string;
}): PreparedCommand {
  return {
    schema_version: 1,
    action_id: actionIdFor({ runId: input.runId, callId: input.callId, name: "run_command", args: input.args, manifestDigest: input.workspaceDigest }),
    run_id: input.runId,
    call_id: input.callId,
    tool: "run_command",
    arguments: input.args,
    args_digest: argsDigest("run_command", input.args),
    workspace_digest: input.workspaceDigest,
    rule: input.rule,
  };
}

/** Re-derives the id and digest from a stored record's content: a record altered in the ledger fails. */
export function verifyPreparedCommand(raw: unknown): { ok: true; command: PreparedCommand } | { ok: false; message: string } {
  const parsed = PreparedCommand.safeParse(raw);
  if (!parsed.success) return { ok: false, message: `the command record is invalid: ${describeZodError(parsed.error)}` };
  const c = parsed.data;
  const again = prepareCommand({ runId: c.run_id, callId: c.call_id, args: c.arguments, workspaceDigest: c.workspace_digest, rule: c.rule });
  if (again.args_digest !== c.args_digest) return { ok: false, message: "the command record's argument digest does not match its arguments" };
  if (again.action_id !== c.action_id) return { ok: false, message: "the command record's action id does not match its content" };
  return { ok: true, command: c };
}
