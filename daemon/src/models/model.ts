import type { Decision } from "../contracts/decision.js";

/** What the runtime hands a decision source each turn (rebuilt from the ledger; see context/). */
export interface ModelView {
  runId: string;
  /** OpenAI-style messages: the authoritative summary first, then recent complete groups. */
  messages: Array<Record<string, unknown>>;
  /** generated from the zod contracts */
  tools: Array<Record<string, unknown>>;
}

export interface ModelUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

export interface ModelTurn {
  decision: Decision;
  usage?: ModelUsage;
}

/**
 * A decision source only PROPOSES. Transient failures throw MiniAgentError with
 * details.transient=true so the runtime may retry (at most twice).
 */
export interface Model {
  readonly name: string;
  decide(view: ModelView, signal: AbortSignal): Promise<ModelTurn>;
}
