import type { EffectivePolicy, ToolClass } from "../contracts/policy.js";
import type { TaskSpec } from "../contracts/task-spec.js";
import { normalizeRel } from "../workspace/safe-path.js";
import { classify, type PolicyDecision } from "./classify.js";
import { decideCommand } from "./decide-command.js";
import { decideByPolicy, type PolicyAction } from "./effective.js";

/** The class of each tool besides run_command, which policy/decide-command.ts decides from its argv. */
const CLASS_OF: Record<string, Exclude<ToolClass, "command">> = {
  read_file: "read",
  search: "read",
  list_files: "read",
  show_diff: "read",
  apply_patch: "write",
  run_tests: "test",
};

/**
 * One proposed call against the task's rules, then the run's policy.
 *   1. the task (classify.ts: forbidden, writable, presets): a deny there is final
 *   2. the policy for the tool's class (effective.ts: deny > ask > allow, the
 *      workspace file only tightening): deny -> `policy_denied`, naming the rule;
 *      a write the policy allows (auto_edit) is approved BY the policy, through
 *      the same bound, recorded approval a person gives (runtime/approval-flow.ts)
 * `rule` says which rule decided, for the trace, the prompt and the model.
 */
export function decideCall(name: string, args: Record<string, unknown>, task: TaskSpec, policy: EffectivePolicy): PolicyDecision {
  const own = classify(name, args, task);
  if (own.verdict === "deny") return { ...own, rule: `task:${own.code ?? "deny"}` };
  if (name === "run_command") return decideCommand(policy, argvOf(args));
  const cls = CLASS_OF[name];
  if (cls === undefined) return own;
  const action: PolicyAction = cls === "write" ? { class: "write", path: writePath(args) } : { class: cls };
  const outcome = decideByPolicy(policy, action);
  const what = cls === "write" ? `writing ${writePath(args)}` : `${name}`;
  if (outcome.verdict === "deny")
    return { verdict: "deny", code: "policy_denied", reason: `${what} is denied by the policy (${outcome.rule})`, rule: outcome.rule };
  if (cls !== "write") {
    // only a write or a command has a bound action a person can approve; the policy loader refuses `ask` elsewhere
    if (outcome.verdict === "ask")
      return { verdict: "deny", code: "policy_denied", reason: `${what} cannot be asked for (${outcome.rule})`, rule: outcome.rule };
    return { ...own, rule: outcome.rule };
  }
  if (outcome.verdict === "ask") return { verdict: "ask", code: "approval_required", reason: `${what} needs approval (${outcome.rule})`, rule: outcome.rule };
  return { verdict: "allow", code: null, reason: `${what} is approved by the policy (${outcome.rule})`, rule: outcome.rule };
}

function writePath(args: Record<string, unknown>): string {
  const n = normalizeRel(args.path);
  return n.ok ? n.rel : String(args.path);
}

function argvOf(args: Record<string, unknown>): string[] {
  return Array.isArray(args.argv) ? args.argv.map(String) : [];
}
