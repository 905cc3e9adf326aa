import { MiniAgentError } from "../errors.js";
import type { ActionRow } from "../store/ledger.js";
import type { ToolContext } from "../tools/context.js";
import { errorResult, okResult } from "../tools/result.js";
import { patchState, type RuntimeDeps } from "./deps.js";
import { observe } from "./observe.js";

/**
 * Carries out one APPROVED write: intent (durable) -> write -> written + receipt
 * (durable, together). A crash between the steps leaves exactly the facts that
 * recovery's three-state check needs; a write is never retried blindly.
 */
export async function executeApprovedWrite(deps: RuntimeDeps, runId: string, row: ActionRow, ctx: ToolContext): Promise<"written" | "refused"> {
  const rec = row.record;
  const checked = deps.tools.verifyRecord(rec.prepared);
  if (!checked.ok) throw new MiniAgentError("approval_stale", `action ${rec.action_id} record does not hold: ${checked.message}`);
  if (!row.intent) {
    deps.ledger.tx(() => {
      deps.ledger.setActionStatus(runId, rec.action_id, "intent", { intent: { schema_version: 1, before_hash: rec.before_hash, after_hash: rec.after_hash } });
      deps.trace.append(runId, {
        type: "action_intent",
        call_id: rec.call_id,
        action_id: rec.action_id,
        payload: { path: rec.path, before_hash: rec.before_hash, after_hash: rec.after_hash },
      });
    });
  }
  deps.crash("after_intent");
  const outcome = await deps.tools.commit(checked.action, ctx);
  if (!outcome.ok) {
    // nothing was written (commit re-checks first); the model hears why and must re-read
    deps.ledger.tx(() => {
      deps.ledger.setActionStatus(runId, rec.action_id, "stale");
      observe(deps, { runId }, rec.tool, outcome.result);
    });
    return "refused";
  }
  deps.crash("after_write_before_receipt");
  recordReceipt(deps, runId, row, "write");
  return "written";
}

/** written + receipt + the model's observation + the write counter, as one fact. */
export function recordReceipt(deps: RuntimeDeps, runId: string, row: ActionRow, source: "write" | "recovered"): void {
  const rec = row.record;
  deps.ledger.tx(() => {
    deps.trace.append(runId, {
      type: "action_written",
      call_id: rec.call_id,
      action_id: rec.action_id,
      payload: { path: rec.path, after_hash: rec.after_hash, source },
    });
    deps.ledger.setActionStatus(runId, rec.action_id, "receipted", { receipt: { schema_version: 1, after_hash: rec.after_hash, source } });
    patchState(deps, runId, (s) => void (s.counters.writes += 1));
    deps.trace.append(runId, {
      type: "action_receipt",
      call_id: rec.call_id,
      action_id: rec.action_id,
      payload: { path: rec.path, after_hash: rec.after_hash, source },
    });
    observe(deps, { runId }, rec.tool, okResult(rec.call_id, { path: rec.path, version: rec.after_hash, action_id: rec.action_id, diff: rec.diff }));
  });
}

/** A write that was refused by the user or went stale: the model is told and the run goes on. */
export function recordNoWrite(deps: RuntimeDeps, runId: string, row: ActionRow, code: "approval_rejected" | "approval_stale", message: string): void {
  deps.ledger.tx(() => {
    deps.ledger.setActionStatus(runId, row.record.action_id, code === "approval_rejected" ? "rejected" : "stale");
    observe(deps, { runId }, row.record.tool, errorResult(row.record.call_id, code, message));
  });
}
