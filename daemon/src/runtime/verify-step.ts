import { isMiniAgentError } from "../errors.js";
import type { ActiveRun } from "./active-run.js";
import { patchState, type RuntimeDeps } from "./deps.js";
import { sandboxIncludeReporter } from "./sandbox-include.js";
import { moveRun } from "./lifecycle.js";
import type { VerificationEvidence } from "./service.js";
import { interruptRun, stopRun } from "./stop.js";
import { verificationError } from "../contracts/verifier-reason.js";

/**
 * The model said "final": a request, not evidence. The run is persisted as
 * `verifying` first, so a crash from here on resumes into the Verifier and
 * never back into the model; the Verifier gets a FRESH sandbox (executor.run).
 */
export async function verifyAndFinish(deps: RuntimeDeps, active: ActiveRun, finalText?: string): Promise<void> {
  const run = deps.ledger.getRun(active.runId);
  const resumed = run.status === "verifying" || run.state.interrupted_from === "verifying";
  deps.ledger.tx(() => {
    moveRun(deps, active.runId, "verifying", "the host Verifier is checking the workspace", {
      state: (s) => {
        s.interrupted_from = null;
        s.counters.elapsed_ms = active.elapsedMs();
      },
    });
    // a final decision has no event of its own: its text rides on this one's trace-file line (the event types stay as they are)
    if (!resumed)
      deps.trace.append(active.runId, {
        type: "verification_started",
        payload: {},
        ...(finalText !== undefined && { content: { kind: "model_text" as const, text: finalText } }),
      });
  });
  await active.closeSession();
  deps.crash("during_verifying");

  let evidence: VerificationEvidence;
  try {
    evidence = await deps.verifier({
      runId: active.runId,
      task: run.record.task,
      workspaceRoot: run.record.workspace,
      controlDir: run.record.control_dir,
      acceptanceDir: active.acceptanceDir,
      executor: active.executor,
      signal: active.signal,
      sandboxInclude: active.ctx.sandboxInclude ?? [],
      ...(active.ctx.dependencyLayers && { dependencyLayers: active.ctx.dependencyLayers }),
      onSandboxInclude: sandboxIncludeReporter(deps, active.runId, active.ctx.sandboxInclude ?? []),
      ...(run.record.policy && { policy: run.record.policy }),
      baselineTests: deps.baselineTests,
    });
  } catch (err) {
    if (active.signal.aborted) return abortedDuringVerify(deps, active);
    const code = isMiniAgentError(err) ? err.code : "internal";
    deps.logger.error({ runId: active.runId, err }, "verifier failed");
    const reason = verificationError(code);
    deps.trace.append(active.runId, { type: "verification_failed", payload: { reason } });
    return stopRun(deps, active, "failed", reason);
  }
  // a verdict reached while being cancelled is not trusted either way
  if (active.signal.aborted) return abortedDuringVerify(deps, active);
  deps.ledger.tx(() => {
    patchState(deps, active.runId, (s) => void (s.verification = evidence));
    deps.trace.append(active.runId, {
      type: evidence.passed ? "verification_passed" : "verification_failed",
      payload: {
        workspace_digest: evidence.workspace_digest,
        protected_paths_changed: evidence.protected_paths_changed,
        tests: evidence.tests,
        acceptance: evidence.acceptance,
        reason: evidence.reason,
        // file, line and rule only: the evidence never holds a secret's value
        ...(evidence.diff_scan_hits && { diff_scan_hits: evidence.diff_scan_hits }),
        ...(evidence.verify_commands && { verify_commands: evidence.verify_commands }),
      },
    });
  });
  if (evidence.passed) return stopRun(deps, active, "completed", "verified by the host");
  return stopRun(deps, active, "failed", evidence.reason ?? "verification_failed");
}

function abortedDuringVerify(deps: RuntimeDeps, active: ActiveRun): Promise<void> {
  if (active.abortReason === "shutdown") return interruptRun(deps, active, "verifying");
  return stopRun(deps, active, "cancelled", "cancelled during verification", { cancelled: true });
}
