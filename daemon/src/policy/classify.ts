import type { ErrorCode } from "../errors.js";
import type { TaskSpec } from "../contracts/task-spec.js";
import { TOOL_NAMES } from "../contracts/tool-call.js";
import { createForbiddenMatcher, globMatcher } from "../workspace/forbidden.js";
import { isWorkspaceRoot, normalizeRel } from "../workspace/safe-path.js";
import { isDependencyPath } from "../workspace/dependency-dirs.js";

export type Verdict = "allow" | "ask" | "deny";

export interface PolicyDecision {
  verdict: Verdict;
  /** why a deny or ask happened, as a stable code (null for allow) */
  code: ErrorCode | null;
  reason: string;
  /** which rule decided (policy/decide-call.ts), e.g. `policy:interactive:auto_edit:tests/**`; absent for the task's own rules alone */
  rule?: string;
}

const allow = (reason: string): PolicyDecision => ({ verdict: "allow", code: null, reason });
const deny = (code: ErrorCode, reason: string): PolicyDecision => ({ verdict: "deny", code, reason });

/**
 * deny > ask > allow, decided from the proposal and the task alone (pure).
 * Reads are allowed, writes ask, and a forbidden or non-writable path is
 * denied: since deny is checked first, no approval can lift it. The tools
 * re-check the same rules on the real filesystem (symlinks, hard links).
 */
export function classify(name: string, args: Record<string, unknown>, task: TaskSpec): PolicyDecision {
  if (!(TOOL_NAMES as string[]).includes(name)) return deny("unknown_tool", `unknown tool '${name}'`);
  const forbidden = createForbiddenMatcher(task.forbidden);
  const pathOf = (raw: unknown): { ok: true; rel: string } | { ok: false; decision: PolicyDecision } => {
    const n = normalizeRel(raw);
    if (!n.ok) return { ok: false, decision: deny("path_denied", n.message) };
    if (forbidden(n.rel)) return { ok: false, decision: deny("path_denied", `${n.rel} is forbidden by policy`) };
    return { ok: true, rel: n.rel };
  };
  switch (name) {
    case "read_file": {
      const p = pathOf(args.path);
      return p.ok ? allow("reads are allowed") : p.decision;
    }
    case "search":
    case "list_files": {
      if (args.path === undefined || isWorkspaceRoot(args.path)) return allow("reads are allowed");
      const p = pathOf(args.path);
      return p.ok ? allow("reads are allowed") : p.decision;
    }
    case "show_diff":
      return allow("reads are allowed");
    case "run_tests": {
      const preset = typeof args.preset === "string" ? args.preset : "";
      if (!Object.hasOwn(task.test_presets, preset)) return deny("unknown_preset", `no test preset '${preset}' in the task`);
      return allow("named test presets run in the sandbox");
    }
    case "run_command":
      // the task names no commands: the command policy decides each call (policy/decide-command.ts)
      return allow("commands are decided by the command policy");
    case "apply_patch": {
      const p = pathOf(args.path);
      if (!p.ok) return p.decision;
      // installed dependencies are the run's environment (a read-only layer in the sandbox), never the task's
      // content; `vendor` needs the filesystem (go.mod) to be one, so apply_patch re-checks it there
      if (isDependencyPath(p.rel, false)) return deny("not_writable", `${p.rel} is inside a dependency folder; dependency folders are read-only`);
      if (!globMatcher(task.writable)(p.rel)) return deny("not_writable", `${p.rel} is not writable for this task`);
      if (args.version === "absent" && !globMatcher(task.creatable)(p.rel)) {
        return deny("not_writable", `${p.rel} may not be created for this task`);
      }
      return { verdict: "ask", code: "approval_required", reason: `writing ${p.rel} needs approval` };
    }
  }
  return deny("unknown_tool", `unknown tool '${name}'`);
}
