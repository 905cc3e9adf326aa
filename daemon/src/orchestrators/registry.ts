import type { OrchestratorName } from "../contracts/run.js";
import { MiniAgentError } from "../errors.js";
import { manualOrchestrator } from "./manual.js";
import type { Orchestrator, OrchestratorOptions } from "./orchestrator.js";

/**
 * One orchestrator of each kind per daemon, made on first use. The framework
 * adapters are imported only when a run asks for them, so the daemon (and a
 * manual run) never loads LangGraph or the Agents SDK.
 */
export class Orchestrators {
  private readonly made = new Map<OrchestratorName, Promise<Orchestrator>>();

  constructor(private readonly options: OrchestratorOptions) {}

  get(name: OrchestratorName): Promise<Orchestrator> {
    let o = this.made.get(name);
    if (!o) {
      o = this.make(name);
      this.made.set(name, o);
      // a failed load is not cached: the next run tries again
      o.catch(() => this.made.delete(name));
    }
    return o;
  }

  async closeAll(): Promise<void> {
    for (const o of this.made.values()) {
      try {
        await (await o).close?.();
      } catch {
        // nothing to undo: the orchestrator failed to load or close; its saved state is on disk
      }
    }
    this.made.clear();
  }

  private async make(name: OrchestratorName): Promise<Orchestrator> {
    try {
      switch (name) {
        case "manual":
          return manualOrchestrator();
        case "langgraph":
          return (await import("./langgraph/index.js")).langgraphOrchestrator(this.options);
        case "agents-sdk":
          return (await import("./agents-sdk/index.js")).agentsSdkOrchestrator(this.options);
      }
    } catch (err) {
      throw new MiniAgentError("internal", `the ${name} orchestrator could not be loaded`, { cause: err });
    }
  }
}
