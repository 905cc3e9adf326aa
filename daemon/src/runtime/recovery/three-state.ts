import type { ActionRow } from "../../store/ledger.js";
import type { ToolContext } from "../../tools/context.js";
import { checkApproval } from "../../policy/approvals.js";
import type { RuntimeDeps } from "../deps.js";
import { executeApprovedWrite, recordNoWrite, recordReceipt } from "../write-action.js";

export type RecoveryOutcome =
  | { ok: true; recovered: Array<{ action_id: string; outcome: "receipt_only" | "written" | "stale" }> }
  | { ok: false; path: string; message: string };

/**
 * For every approved write without a receipt, the file on disk says which of
 * three states we are in:
 *   equal to before -> nothing was written: re-check approval and workspace, then write;
 *   equal to after  -> the write happened: record only the missing receipt;
 *   anything else   -> someone else changed it: stop as `uncertain`, touch nothing.
 * A write is never repeated on a guess.
 */
export async function recoverInFlightWrites(deps: RuntimeDeps, runId: string, ctx: ToolContext, approvalKey: Uint8Array): Promise<RecoveryOutcome> {
  const recovered: Array<{ action_id: string; outcome: "receipt_only" | "written" | "stale" }> = [];
  // only writes: an approved run_command writes nothing and is re-proposed by the loop instead (runtime/command-step.ts)
  const inFlight = deps.ledger
    .listActions(runId)
    .filter((a: ActionRow) => a.record.tool !== "run_command" && (a.status === "approved" || a.status === "intent") && a.receipt === null);
  for (const row of inFlight) {
    const rec = row.record;
    const current = await deps.tools.fileVersion(rec.path, ctx);
    if (current !== null && current === rec.after_hash) {
      recordReceipt(deps, runId, row, "recovered");
      recovered.push({ action_id: rec.action_id, outcome: "receipt_only" });
      continue;
    }
    if (current === null || current !== rec.before_hash) {
      return {
        ok: false,
        path: rec.path,
        message: `${rec.path} matches neither the version before nor the version after approved action ${rec.action_id}; the workspace was left untouched, check the file and start a new run`,
      };
    }
    const check = checkApproval(
      deps.ledger.findApproval(runId, rec.action_id),
      { runId, action: rec.prepared, workspaceDigest: await deps.tools.workspaceDigest(ctx) },
      approvalKey,
    );
    if (!check.ok) {
      recordNoWrite(deps, runId, row, "approval_stale", `${check.message}; nothing was written; re-read and propose again`);
      recovered.push({ action_id: rec.action_id, outcome: "stale" });
      continue;
    }
    const done = await executeApprovedWrite(deps, runId, row, ctx);
    recovered.push({ action_id: rec.action_id, outcome: done === "written" ? "written" : "stale" });
  }
  return { ok: true, recovered };
}
