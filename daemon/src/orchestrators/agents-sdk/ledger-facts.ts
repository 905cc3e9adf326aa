import type { ToolCall, ToolResult } from "../../contracts/tool-call.js";
import { MiniAgentError } from "../../errors.js";
import type { RuntimeDeps } from "../../runtime/deps.js";
import type { ActionRow } from "../../store/ledger.js";

/**
 * What the ledger says about one tool call. The SDK only carries a call id
 * between our Model and our tools; the call itself, its action and its answer
 * are always read back from the ledger, so the host acts on exactly the bytes
 * the decision source proposed and recorded.
 */
export function recordedCall(deps: RuntimeDeps, runId: string, callId: string): ToolCall {
  const messages = deps.ledger.listMessages(runId);
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === "assistant" && m.decision.kind === "tool" && m.decision.call.call_id === callId) return m.decision.call;
  }
  throw new MiniAgentError("internal", `the ledger of run ${runId} has no recorded call ${callId}`);
}

/** The observation recorded for the call's latest proposal, if any (a model may use a call id twice; an older answer is not this one's). */
export function answerOf(deps: RuntimeDeps, runId: string, callId: string): ToolResult | null {
  const messages = deps.ledger.listMessages(runId);
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === "tool" && m.result.call_id === callId) return m.result;
    if (m.role === "assistant" && m.decision.kind === "tool" && m.decision.call.call_id === callId) return null;
  }
  return null;
}

/** The newest action proposed for the call (a write or a command waiting for a person), if any. */
export function actionOf(deps: RuntimeDeps, runId: string, callId: string): ActionRow | null {
  const rows = deps.ledger.listActions(runId).filter((a) => a.record.call_id === callId);
  return rows[rows.length - 1] ?? null;
}

/** The call id of the ledger's newest decision when it is a tool call: where the run really is. */
export function lastCallId(deps: RuntimeDeps, runId: string): string | null {
  const messages = deps.ledger.listMessages(runId);
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === "assistant") return m.decision.kind === "tool" ? m.decision.call.call_id : null;
  }
  return null;
}

/**
 * The id the SDK knows a call by. The call's own id, except for a model that
 * reuses an id within a run: the SDK pairs calls and outputs by id and would
 * take the old output for the new call, so the repeat gets `<id>~<n>` (`~`
 * cannot occur in an id, contracts/common.ts). Tools map it back with
 * ledgerCallId.
 */
export function sdkCallId(deps: RuntimeDeps, runId: string, callId: string): string {
  const uses = deps.ledger.listMessages(runId).filter((m) => m.role === "assistant" && m.decision.kind === "tool" && m.decision.call.call_id === callId).length;
  return uses > 1 ? `${callId}~${uses}` : callId;
}

export function ledgerCallId(sdkId: string): string {
  const cut = sdkId.indexOf("~");
  return cut === -1 ? sdkId : sdkId.slice(0, cut);
}
