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
 *
 * Core also asks a handler of that name for the run tree each nested call
 * runs under (singletons/async_local_storage `runWithConfig`), and that tree
 * carries the call's config, which interrupt() reads: so the handler gives a
 * tree with tracing off, as core makes itself when no tracer is active (given
 * nothing, interrupt() fails "outside the context of a graph"). Nested calls
 * see `tracingEnabled: false` and add no tracer either. (A tracing-off tree
 * around the graph call alone is not enough: the graph's stream replaces it.)
 * Tested with the variables set, a counting endpoint and an interrupt/resume
 * (no-tracing.test.ts, tests/orchestrators/langgraph-no-network.test.ts).
 */
class NoTracing extends BaseCallbackHandler {
  name = "langchain_tracer";
  // what core calls on a handler of that name; nothing to update
  updateFromRunTree(): void {}
  getRunTreeWithTracingConfig(): { name: string; tracingEnabled: false; extra: Record<string, unknown> } {
    // a new one each time: core writes the call's config into `extra`
    return { name: "mini-agent", tracingEnabled: false, extra: {} };
  }
}

/** the callbacks every graph call is given */
export function noTracingCallbacks(): BaseCallbackHandler[] {
  return [new NoTracing()];
}
