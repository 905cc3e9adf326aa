import type { Decision } from "../contracts/decision.js";
import { isMiniAgentError, MiniAgentError } from "../errors.js";
import type { ModelTurn } from "../models/model.js";
import type { ActiveRun } from "./active-run.js";
import { patchState, type RuntimeDeps } from "./deps.js";
import type { CompactionFacts } from "./view-input.js";

export const MODEL_RETRY = { maxRetries: 2 } as const;

/**
 * Asks the decision source for one turn. Only failures the model marks as
 * transient (details.transient === true) are retried, at most twice, each with
 * a model_retry event; anything else is final for this turn.
 */
export async function askModel(deps: RuntimeDeps, active: ActiveRun, timeoutMs: number): Promise<ModelTurn> {
  const model = active.model;
  if (!model) throw new MiniAgentError("internal", "the run has no model");
  const workspaceDigest = await deps.tools.workspaceDigest(active.ctx);
  for (let attempt = 0; ; attempt++) {
    const { compaction, ...view } = deps.buildView(deps.ledger, active.runId, workspaceDigest);
    noteCompaction(deps, active, compaction);
    deps.trace.append(active.runId, { type: "model_requested", payload: { model: model.name, attempt } });
    const signal = AbortSignal.any([active.signal, AbortSignal.timeout(timeoutMs)]);
    try {
      return await model.decide(view, signal);
    } catch (err) {
      if (active.signal.aborted) throw new MiniAgentError("cancelled", "cancelled while waiting for the model", { cause: err });
      const transient = isMiniAgentError(err) && err.details?.transient === true;
      if (!transient || attempt >= MODEL_RETRY.maxRetries) throw err;
      deps.trace.append(active.runId, { type: "model_retry", payload: { attempt: attempt + 1, code: isMiniAgentError(err) ? err.code : "internal" } });
      deps.logger.warn({ runId: active.runId, err, attempt }, "transient model failure, retrying");
    }
  }
}

/** Records the decision, the turn and (for replays) the advanced cursor in one transaction. */
export function recordDecision(deps: RuntimeDeps, active: ActiveRun, turn: ModelTurn): Decision {
  const d = turn.decision;
  deps.ledger.tx(() => {
    const run = deps.ledger.getRun(active.runId);
    deps.ledger.appendMessage(active.runId, { schema_version: 1, role: "assistant", decision: d });
    deps.ledger.updateRun(active.runId, { replay_cursor: run.replay_cursor + 1 });
    patchState(deps, active.runId, (s) => {
      s.counters.model_turns += 1;
      s.counters.prompt_tokens += turn.usage?.prompt_tokens ?? 0;
      s.counters.completion_tokens += turn.usage?.completion_tokens ?? 0;
      s.counters.elapsed_ms = active.elapsedMs();
      if (d.kind === "plan") s.last_plan = d.text;
    });
    if (d.kind === "plan") deps.trace.append(active.runId, { type: "plan_recorded", payload: { text: d.text }, content: { kind: "model_text", text: d.text } });
    if (d.kind === "tool") {
      deps.trace.append(active.runId, {
        type: "tool_proposed",
        call_id: d.call.call_id,
        payload: { name: d.call.name, arguments: d.call.arguments },
      });
    }
  });
  return d;
}

/** One history_compaction event each time what is left out changes, so the trace says what the model no longer saw. */
function noteCompaction(deps: RuntimeDeps, active: ActiveRun, c: CompactionFacts | undefined): void {
  if (!c || (c.dropped_groups === 0 && c.trimmed_call_ids.length === 0)) return;
  const key = `${c.dropped_call_ids.join(",")}|${c.trimmed_call_ids.join(",")}|${c.dropped_groups}`;
  if (key === active.lastCompaction) return;
  active.lastCompaction = key;
  deps.trace.append(active.runId, { type: "history_compaction", payload: { ...c } });
}
