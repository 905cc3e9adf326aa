import type { EffectivePolicy } from "../contracts/policy.js";
import type { PolicyDecision } from "./classify.js";
import { decideByPolicy } from "./effective.js";
import { programMissing } from "./image-programs.js";

/**
 * One argv against the run's policy: the model's `run_command`, a command a
 * person is asked to approve, and a workspace policy file's verify command
 * (untrusted content too) are all decided here, by the same rule. deny is
 * final (`policy_denied`, and no approval can lift it); ask needs a person
 * (`approval_required`); allow runs. Where a command may run at all (only in a
 * container sandbox) is the caller's question, asked before this one.
 */
export function decideCommand(policy: EffectivePolicy, argv: readonly string[]): PolicyDecision {
  const outcome = decideByPolicy(policy, { class: "command", argv });
  if (outcome.verdict === "deny")
    return {
      verdict: "deny",
      code: "policy_denied",
      reason: `denied by ${outcome.rule}; nothing ran, and no approval can lift a deny${allowedHint(policy, outcome.rule)}`,
      rule: outcome.rule,
    };
  // the policy's deny speaks first; a command it would allow or ask about must also exist in the run's image
  const missing = programMissing(policy, argv);
  if (missing !== null) return missing;
  if (outcome.verdict === "ask") return { verdict: "ask", code: "approval_required", reason: `needs approval (${outcome.rule})`, rule: outcome.rule };
  return { verdict: "allow", code: null, reason: `allowed by ${outcome.rule}`, rule: outcome.rule };
}

/**
 * Where nobody can be asked (ci, eval), an unlisted command is denied: the
 * model is told the exact shapes that do run, since an entry requires its
 * options as written (`python3 -P -m py_compile <path>...`) and a guess that
 * differs by one option is denied too.
 */
function allowedHint(policy: EffectivePolicy, rule: string): string {
  if (!rule.endsWith(":commands.unlisted") || policy.command_allow.length === 0) return "";
  const shapes = policy.command_allow.map((s) => s.join(" ")).join("; ");
  return `. Commands that run here: ${shapes} (<path>: a workspace path, relative and not an option; <pkg>: a Go package pattern such as ./...)`;
}
