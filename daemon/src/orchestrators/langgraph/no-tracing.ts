// LangGraph's entry installs the real AsyncLocalStorage this relies on (before it, run() is a no-op mock)
import "@langchain/langgraph";
import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";

/**
 * LangChain turns LangSmith tracing on from the environment
 * (LANGSMITH_TRACING, LANGCHAIN_TRACING_V2, ...) at every graph call, and a
 * tracer posts each node's inputs and outputs to api.smith.langchain.com (or
 * LANGSMITH_ENDPOINT). The daemon makes no such request, whatever its
 * environment: a graph call runs under a run tree that says tracing is off,
 * which @langchain/core checks before the environment (callbacks/manager.ts:
 * `traceableRunTree?.tracingEnabled ?? isTracingEnabled()`) and which each
 * nested call inherits. tests/orchestrators/langgraph-no-network.test.ts
 * proves it with the variables set and a counting endpoint.
 */
export function withoutTracing<T>(fn: () => Promise<T>): Promise<T> {
  return AsyncLocalStorageProviderSingleton.getInstance().run({ name: "mini-agent", tracingEnabled: false }, fn);
}
