import { MiniAgentError } from "../../errors.js";
import type { Orchestrator, OrchestratorOptions } from "../orchestrator.js";

export function langgraphOrchestrator(_options: OrchestratorOptions): Orchestrator {
  throw new MiniAgentError("internal", "the langgraph orchestrator is not built yet");
}
