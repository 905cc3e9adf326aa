import { MiniAgentError } from "../../errors.js";
import type { Orchestrator, OrchestratorOptions } from "../orchestrator.js";

export function agentsSdkOrchestrator(_options: OrchestratorOptions): Orchestrator {
  throw new MiniAgentError("internal", "the agents-sdk orchestrator is not built yet");
}
