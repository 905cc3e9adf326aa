import type { EffectivePolicy } from "../contracts/policy.js";
import { MiniAgentError } from "../errors.js";
import { decideCommand } from "./decide-command.js";
import { WORKSPACE_POLICY_FILE } from "./workspace-policy.js";

/** What run_created records of each workspace verify command: its name, argv and the rule that let it run. */
export interface WorkspaceVerifyTrace {
  name: string;
  argv: string[];
  rule: string;
}

/**
 * Whether a workspace verify command may run: null, or why not. The file is
 * the repository's, so each command passes the run's command policy exactly
 * as the model's `run_command` does (decide-command.ts; a deny in `ci` stays a
 * deny), and, like `run_command`, it runs only in a container sandbox, never
 * as a host process. An `ask` is refused: the Verifier runs these when nobody
 * may be there to approve (an unattended run, a resume after a restart), and a
 * check that silently did not run would make a green run mean less. The user
 * approves such a command ahead of time by listing it in the daemon's own
 * policy (`commands.allow`), which the workspace cannot write.
 */
export function workspaceVerifyRefusal(policy: EffectivePolicy, argv: readonly string[], executor: "container" | "trusted_local"): string | null {
  const d = decideCommand(policy, argv);
  if (d.verdict === "deny") return `it is denied by ${d.rule}`;
  if (d.verdict === "ask")
    return `it would need an approval (${d.rule}), and the Verifier runs it when nobody may be there to give one; list it in the daemon's policy (commands.allow) or remove it from ${WORKSPACE_POLICY_FILE}`;
  if (executor !== "container") return "it runs only in a container sandbox, never as a host process (the trusted_local backend has none)";
  return null;
}

/**
 * At run creation, when the user is there to read it: a workspace verify
 * command that may not run refuses the run (`policy_denied`, naming the
 * command and the rule) before anything is created, rather than a run that
 * fails only at the end. Returns what the trace records of the ones allowed.
 */
export function checkWorkspaceVerifyCommands(policy: EffectivePolicy, executor: "container" | "trusted_local"): WorkspaceVerifyTrace[] {
  const allowed: WorkspaceVerifyTrace[] = [];
  for (const c of policy.workspace?.verify_commands ?? []) {
    const why = workspaceVerifyRefusal(policy, c.command, executor);
    // JSON-quoted: the argv is the repository's text and may hold control characters
    if (why !== null)
      throw new MiniAgentError(
        "policy_denied",
        `${WORKSPACE_POLICY_FILE}: verify command ${JSON.stringify(c.name)} ${JSON.stringify(c.command)} is refused: ${why}`,
      );
    allowed.push({ name: c.name, argv: [...c.command], rule: decideCommand(policy, c.command).rule ?? "policy" });
  }
  return allowed;
}
