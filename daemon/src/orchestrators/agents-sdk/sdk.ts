// first: it notes the process listeners before the SDK adds its own (process-hooks.ts)
import { removeAddedProcessListeners } from "./process-hooks.js";
import { setTraceProcessors, setTracingDisabled } from "@openai/agents-core";

/**
 * The one place the OpenAI Agents SDK enters mini-agent.
 *
 * We import `@openai/agents-core`, the provider-neutral core that
 * `@openai/agents` is built from and re-exports (same release, 0.20). Importing
 * `@openai/agents` itself registers the OpenAI model provider and the OpenAI
 * tracing exporter as a side effect of the import; neither may exist in the
 * daemon (no request may leave it, issue 14). The core registers neither.
 *
 * Tracing is switched off explicitly as well, before anything runs: the global
 * trace provider is disabled and has no processor (so no exporter) at all, and
 * every Runner is made with `tracingDisabled: true` (runner.ts).
 */
setTracingDisabled(true);
setTraceProcessors([]);
// the trace provider (made by the two calls above) hooks SIGTERM, SIGINT, beforeExit and unhandledRejection with process.exit: the daemon owns its process
removeAddedProcessListeners();

export { Agent, MaxTurnsExceededError, RunState, Runner, Usage, tool } from "@openai/agents-core";
export type { FunctionTool, Model, ModelProvider, ModelRequest, ModelResponse, RunToolApprovalItem } from "@openai/agents-core";
