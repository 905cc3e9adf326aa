import { LiveModel, type LiveModelOptions } from "../models/live/live-model.js";
import { assertLiveGate, type LiveGateInput } from "./live-gate.js";

export interface OpenLiveModelInput {
  gate: LiveGateInput;
  /**
   * Everything that may only happen once isolation is proven: preparing the
   * workspace, building the project context, choosing the credential source.
   * Called ONLY after the gate passed; never called on a refusal.
   */
  prepare: () => Promise<LiveModelOptions>;
}

/**
 * The one entry for `--model live`: the gate first, then the caller's
 * preparation, then a LiveModel that still has not read the key nor sent a
 * request (both happen on the first decide()). A refusal throws
 * MiniAgentError("isolation_unverified", details {reason, refresh_command}).
 */
export async function openGatedLiveModel(input: OpenLiveModelInput): Promise<{ model: LiveModel; reportGeneratedAt: string }> {
  const pass = await assertLiveGate(input.gate);
  const options = await input.prepare();
  return { model: new LiveModel(options), reportGeneratedAt: pass.report_generated_at };
}
