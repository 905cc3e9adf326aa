import type { Decision } from "../../contracts/decision.js";
import type { ToolCall } from "../../contracts/tool-call.js";
import { MiniAgentError } from "../../errors.js";
import { nextDecision, proposeCall } from "../../runtime/steps.js";
import { sdkCallId } from "./ledger-facts.js";
import { halt, type DriveScope } from "./scope.js";
import { type Model, type ModelResponse, Usage } from "./sdk.js";

/**
 * The SDK's `Model`, backed by OUR decision source. It ignores the message
 * list the SDK keeps: `nextDecision` builds the model view from the ledger,
 * asks the replay or live model, and records the decision, exactly as in the
 * manual loop, so all orchestrators give the decision source the same bytes.
 *
 * One SDK turn is one call here, and it returns the first decision the SDK can
 * act on:
 *   tool  -> a function_call item with the call's own id, name and arguments
 *            (a reused id is made unique for the SDK: ledger-facts.ts sdkCallId);
 *   final -> an assistant message: the SDK's final_output, which is NOT done
 *            (the drive hands it to the host Verifier);
 *   plan  -> recorded by nextDecision and nothing else: an assistant message
 *            would end the Runner, so the next decision is asked at once;
 *   a call to a tool the agent does not have -> the host answers it here
 *            (proposeCall: validation says `unknown_tool`, exactly as in the
 *            manual loop), because the SDK would otherwise answer it itself.
 * When the run stops instead (budget, cancel) the Runner is unwound: no
 * further step is taken.
 */
export function hostModel(scope: DriveScope, offered: ReadonlySet<string>): Model {
  return {
    async getResponse(): Promise<ModelResponse> {
      const { deps, active } = scope;
      const before = deps.ledger.getRun(active.runId).state.counters;
      for (;;) {
        const decision: Decision | null = await nextDecision(deps, active);
        if (!decision) halt(scope, "stopped");
        if (decision.kind === "plan") continue;
        if (decision.kind === "tool" && !offered.has(decision.call.name)) {
          const outcome = await proposeCall(deps, active, decision.call);
          if (outcome !== "continue") halt(scope, outcome);
          continue;
        }
        const after = deps.ledger.getRun(active.runId).state.counters;
        return {
          usage: new Usage({
            requests: after.model_turns - before.model_turns,
            inputTokens: after.prompt_tokens - before.prompt_tokens,
            outputTokens: after.completion_tokens - before.completion_tokens,
          }),
          output: [
            decision.kind === "tool" ? functionCall(decision.call, sdkCallId(deps, active.runId, decision.call.call_id)) : assistantMessage(decision.text),
          ],
        };
      }
    },
    // The Runner is only ever run without streaming (runner.ts); a streamed turn would be a second path to keep equal.
    // biome-ignore lint/correctness/useYield: it only refuses; a generator is what the SDK's Model interface asks for
    async *getStreamedResponse() {
      throw new MiniAgentError("internal", "the agents-sdk orchestrator does not stream model turns");
    },
  };
}

function functionCall(call: ToolCall, callId: string) {
  return { type: "function_call" as const, callId, name: call.name, arguments: JSON.stringify(call.arguments), status: "completed" as const };
}

function assistantMessage(text: string) {
  return {
    type: "message" as const,
    role: "assistant" as const,
    status: "completed" as const,
    content: [{ type: "output_text" as const, text }],
  };
}
