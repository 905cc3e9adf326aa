import type { ChangedList, SandboxResult } from "../contracts/sandbox.js";
import type { ToolArgs, ToolResult } from "../contracts/tool-call.js";
import { isMiniAgentError } from "../errors.js";
import type { SandboxSession } from "../sandbox/executor.js";
import { exportSpecOf, toolEnv, type ToolContext } from "./context.js";
import { errorResult, okResult } from "./result.js";
import { limitsReached, normalizeRunnerText, tail } from "./run-tests.js";

/** At most this many changed paths are listed back to the model (the rest is counted as `truncated`). */
export const CHANGED_IN_SANDBOX_MAX = 100;

/** Said in every observation, so the model never mistakes a sandbox change for a workspace change. */
export const DISCARDED_NOTE = "files the command changed in the sandbox were discarded, not copied back; apply_patch is the only way to change the workspace";

export interface RunCommandContext extends ToolContext {
  /** the run's warm sandbox: never a host process (run_command is not offered on trusted_local) */
  session: SandboxSession;
  signal?: AbortSignal;
  /** the budget's min(remaining, per-call cap); the call's own timeout_seconds also applies */
  timeoutMs: number;
  onSandboxInclude?: (paths: string[]) => void;
}

/** How a changed-path list reads for the model; a sandbox that cannot make one says why instead of an empty list. */
function changedView(changed: ChangedList | undefined): { paths: string[]; truncated: boolean } | { unavailable: string } {
  if (changed === undefined) return { unavailable: "this sandbox did not report which files the command changed" };
  if (changed.status === "unavailable") return { unavailable: changed.reason };
  const paths = changed.paths.slice(0, CHANGED_IN_SANDBOX_MAX);
  return { paths, truncated: changed.truncated || changed.paths.length > paths.length };
}

/**
 * run_command's execution, once the command policy has allowed it (runtime/command-step.ts
 * decides that first): the run's warm sandbox, the same limits and output handling as
 * run_tests, and the list of what the command changed there, which is then discarded.
 */
export async function runCommand(callId: string, args: ToolArgs<"run_command">, ctx: RunCommandContext): Promise<ToolResult> {
  const limits = toolEnv(ctx).limits;
  const timeoutMs = Math.max(1, Math.min(ctx.timeoutMs, (args.timeout_seconds ?? Number.POSITIVE_INFINITY) * 1000));
  let res: SandboxResult;
  try {
    res = await ctx.session.exec({
      purpose: "candidate",
      argv: [...args.argv],
      workspaceDir: ctx.workspaceRoot,
      exportSpec: exportSpecOf(ctx),
      ...(ctx.onSandboxInclude && { onIncluded: ctx.onSandboxInclude }),
      env: {},
      timeoutMs,
      outputCapBytes: limits.runnerOutputCapBytes,
      ...(ctx.signal && { signal: ctx.signal }),
      listChanged: { maxPaths: CHANGED_IN_SANDBOX_MAX },
    });
  } catch (err) {
    if (isMiniAgentError(err)) return errorResult(callId, err.code, err.message);
    return errorResult(callId, "sandbox_error", "the sandbox failed to run the command");
  }
  const out = tail(normalizeRunnerText(res.stdout), limits.testOutputBytes);
  const err = tail(normalizeRunnerText(res.stderr), limits.testOutputBytes);
  const changed = changedView(res.changed);
  const data = {
    argv: args.argv,
    exit_code: res.exit_code,
    signal: res.signal,
    timed_out: res.timed_out,
    sandbox_lost: res.sandbox_lost,
    limits: res.limits,
    ...(limitsReached(res) !== null && { limits_note: limitsReached(res) }),
    duration_ms: res.duration_ms,
    /** bytes the command printed (as captured), before the tails below */
    stdout_bytes: Buffer.byteLength(res.stdout, "utf8"),
    stderr_bytes: Buffer.byteLength(res.stderr, "utf8"),
    stdout: out.text,
    stderr: err.text,
    /** the command's own output went over the capture cap: what it printed is incomplete */
    truncated: res.truncated,
    /** only the tails shown here were shortened */
    output_truncated: out.cut || err.cut,
    changed_in_sandbox: changed,
    ...(res.links_left_out && { links_left_out: res.links_left_out }),
    note: DISCARDED_NOTE,
  };
  const truncated = res.truncated || out.cut || err.cut;
  if (res.cancelled) return errorResult(callId, "cancelled", "the command was cancelled", data, truncated);
  return okResult(callId, data, truncated);
}
