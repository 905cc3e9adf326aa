import { BaseCallbackHandler } from "@langchain/core/callbacks/base";

/**
 * LangChain turns LangSmith tracing on from the environment
 * (LANGSMITH_TRACING, LANGCHAIN_TRACING_V2, ...) at every graph and node call,
 * and its tracer then posts each node's inputs and outputs to
 * api.smith.langchain.com (or LANGSMITH_ENDPOINT). The daemon makes no such
 * request, whatever its environment, and changes no global to get there:
 * @langchain/core adds its tracer only when no callback handler named
 * "langchain_tracer" is present yet (callbacks/manager.ts `_configureSync`),
 * and nested calls inherit the handlers of the graph call. Every graph call
 * gets this handler under that name; it records and sends nothing.
 * (A run tree with tracing off in AsyncLocalStorage is not enough: the graph's
 * stream replaces the store.) tests/orchestrators/langgraph-no-network.test.ts
 * proves it with the variables set and a counting endpoint.
 */
class NoTracing extends BaseCallbackHandler {
  name = "langchain_tracer";
  // what core calls on a handler of that name; nothing to update, no run tree to give
  updateFromRunTree(): void {}
  getRunTreeWithTracingConfig(): undefined {
    return undefined;
  }
}

/** the callbacks every graph call is given */
export function noTracingCallbacks(): BaseCallbackHandler[] {
  return [new NoTracing()];
}
