import type { VerifyCommand } from "../contracts/task-spec.js";
import type { EffectivePolicy, PolicyFile, PolicyRules, PolicyVerdict, ProfileName, ToolClass } from "../contracts/policy.js";
import { globMatcher } from "../workspace/forbidden.js";
import { allowShapeHit, denyTokenHit } from "./command-match.js";
import { BUILTIN_POLICY } from "./defaults.js";

/**
 * The policy a run gets, and the one decision rule over it.
 *
 *   resolveEffectivePolicy({file, source, profile, workspace}): EffectivePolicy
 *       built-in defaults < the file's top level < the profile's rules (built-in
 *       profile, then the file's). Deny tokens only ever add up: the built-in
 *       ones always apply, and so do verify commands (by name: a later layer's
 *       command of the same name replaces an earlier one). The workspace's own
 *       rules are kept beside, to tighten (its verify commands run as well as the
 *       daemon's, never instead: verifier/verify-commands.ts).
 *   decideByPolicy(policy, action): {verdict, rule}
 *       deny beats ask beats allow. The daemon's policy is decided first; the
 *       workspace's rules are decided on their own (every field they leave out
 *       imposes nothing) and the stricter verdict wins, so a workspace file
 *       (untrusted content) can add a deny or take an auto-approval away, and
 *       can never allow what the daemon does not.
 *
 * The task's own rules (forbidden, writable, presets: policy/classify.ts) are
 * decided before this and a deny there is final too.
 */
export type PolicyAction = { class: "read" } | { class: "test" } | { class: "write"; path: string } | { class: "command"; argv: readonly string[] };

export interface PolicyOutcome {
  verdict: PolicyVerdict;
  /** which rule decided, e.g. `policy:interactive:auto_edit:tests/**` or `workspace:deny_token:curl` */
  rule: string;
}

const STRICTNESS: Record<PolicyVerdict, number> = { allow: 0, ask: 1, deny: 2 };

export function resolveEffectivePolicy(input: {
  file: PolicyFile | null;
  source: string | null;
  profile?: ProfileName;
  workspace?: PolicyRules | null;
}): EffectivePolicy {
  const file = input.file ?? BUILTIN_POLICY;
  const profile = input.profile ?? file.default_profile ?? "interactive";
  const layers: PolicyRules[] = [BUILTIN_POLICY, file, BUILTIN_POLICY.profiles?.[profile] ?? {}, file.profiles?.[profile] ?? {}];
  const tools = { ...BUILTIN_POLICY.tools } as Record<ToolClass, PolicyVerdict>;
  let autoEdit: string[] = [];
  let autoEditWritable = false;
  let allow: string[][] = [];
  let unlisted: "ask" | "deny" | undefined;
  const deny = new Set<string>();
  const verifyCommands = new Map<string, VerifyCommand>();
  for (const layer of layers) {
    for (const c of layer.verify_commands ?? []) verifyCommands.set(c.name, c);
    Object.assign(tools, layer.tools ?? {});
    if (layer.auto_edit !== undefined) autoEdit = [...layer.auto_edit];
    if (layer.auto_edit_writable !== undefined) autoEditWritable = layer.auto_edit_writable;
    if (layer.commands?.allow !== undefined) allow = layer.commands.allow.map((p) => [...p]);
    if (layer.commands?.unlisted !== undefined) unlisted = layer.commands.unlisted;
    for (const t of layer.commands?.deny_tokens ?? []) deny.add(t);
  }
  return {
    profile,
    tools,
    auto_edit: autoEdit,
    auto_edit_writable: autoEditWritable,
    command_allow: allow,
    ...(unlisted !== undefined && { command_unlisted: unlisted }),
    deny_tokens: [...deny],
    verify_commands: [...verifyCommands.values()],
    workspace: input.workspace ?? null,
    source: input.source,
  };
}

const BUILTIN_EFFECTIVE = resolveEffectivePolicy({ file: null, source: null });

/** The run's policy, or the built-in `interactive` one for a context without one (runs made before policies, tests). */
export function policyOf(ctx: { policy?: EffectivePolicy }): EffectivePolicy {
  return ctx.policy ?? BUILTIN_EFFECTIVE;
}

export function decideByPolicy(policy: EffectivePolicy, action: PolicyAction): PolicyOutcome {
  const own = decide(
    {
      tools: policy.tools,
      auto_edit: policy.auto_edit,
      auto_edit_writable: policy.auto_edit_writable === true,
      commands: {
        allow: policy.command_allow,
        deny_tokens: policy.deny_tokens,
        ...(policy.command_unlisted !== undefined && { unlisted: policy.command_unlisted }),
      },
    },
    action,
    policy.tools,
  );
  const mine: PolicyOutcome = { verdict: own.verdict, rule: `policy:${policy.profile}:${own.rule}` };
  if (policy.workspace === null) return mine;
  // a workspace `unlisted` without its own allowlist means "not on the daemon's allowlist"
  const w = policy.workspace;
  const wsRules = w.commands?.unlisted !== undefined && w.commands.allow === undefined ? { ...w, commands: { ...w.commands, allow: policy.command_allow } } : w;
  // the workspace switches auto_edit_writable off, never on: a write it approved asks again
  if (w.auto_edit_writable === false && mine.verdict === "allow" && mine.rule.endsWith(":auto_edit_writable"))
    return { verdict: "ask", rule: "workspace:auto_edit_writable (off)" };
  const ws = decide({ ...wsRules, auto_edit_writable: false }, action, null);
  return STRICTNESS[ws.verdict] > STRICTNESS[mine.verdict] ? { verdict: ws.verdict, rule: `workspace:${ws.rule}` } : mine;
}

/**
 * One layer's decision. `fallback` is the verdict per class where the layer is
 * silent: the daemon's resolved tools, or null for a workspace layer (silent = allow).
 */
function decide(rules: PolicyRules, action: PolicyAction, fallback: Record<ToolClass, PolicyVerdict> | null): { verdict: PolicyVerdict; rule: string } {
  const classVerdict = rules.tools?.[action.class] ?? fallback?.[action.class] ?? "allow";
  if (classVerdict === "deny") return { verdict: "deny", rule: `tools.${action.class}` };
  if (action.class === "command") {
    const hit = denyTokenHit(action.argv, rules.commands?.deny_tokens ?? []);
    if (hit !== null) return { verdict: "deny", rule: `deny_token:${hit}` };
    const allowList = rules.commands?.allow;
    if (allowList !== undefined) {
      const shape = allowShapeHit(action.argv, allowList);
      if (shape !== null) return { verdict: "allow", rule: `allow:${shape.join(" ")}` };
    }
    // not on the allowlist: the stricter of `commands.unlisted` and `tools.command`
    const unlisted = rules.commands?.unlisted;
    if (unlisted === "deny") return { verdict: "deny", rule: "commands.unlisted" };
    // a workspace allowlist names the only commands it lets run without asking
    if (allowList !== undefined && fallback === null) return { verdict: "ask", rule: "commands.allow (not listed)" };
    if (unlisted === "ask" && classVerdict === "allow") return { verdict: "ask", rule: "commands.unlisted" };
    return { verdict: classVerdict, rule: `tools.command` };
  }
  if (action.class === "write") {
    const globs = rules.auto_edit;
    if (globs !== undefined) {
      const glob = globs.find((g) => globMatcher([g])(action.path));
      if (glob !== undefined) return { verdict: classVerdict === "ask" ? "allow" : classVerdict, rule: `auto_edit:${glob}` };
      // a workspace auto_edit list names the only paths it lets be approved by policy
      if (fallback === null) return { verdict: "ask", rule: "auto_edit (not listed)" };
    }
    // only the daemon's layer can approve this way; the task's own rules already said the path is writable
    if (fallback !== null && rules.auto_edit_writable === true && classVerdict === "ask") return { verdict: "allow", rule: "auto_edit_writable" };
  }
  return { verdict: classVerdict, rule: `tools.${action.class}` };
}
