import { z } from "zod";
import type { Backend } from "../contracts/sandbox.js";
import { TOOL_ARGS, TOOL_NAMES, type ToolName } from "../contracts/tool-call.js";

export interface OpenAiTool {
  type: "function";
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

/** Tools that need a sandbox of their own: never offered where code would run as host processes. */
const SANDBOX_ONLY_TOOLS: readonly ToolName[] = ["run_command"];

/**
 * The tools a run on this backend is offered. run_command runs only in the run's
 * container sandbox, so a `trusted_local` run (host processes) is never told
 * about it, and a proposed call is refused there (runtime/command-step.ts).
 */
export function toolsOffered(backend: Backend): ToolName[] {
  return backend === "container" ? [...TOOL_NAMES] : TOOL_NAMES.filter((n) => !SANDBOX_ONLY_TOOLS.includes(n));
}

/**
 * Tool descriptions for a model, GENERATED from the same zod schemas the host
 * validates with, so what the model is told and what the host accepts cannot
 * drift apart. OpenAI `tools` format. Without a backend: every tool.
 */
export function toolDescriptions(opts: { backend?: Backend } = {}): OpenAiTool[] {
  const names = opts.backend === undefined ? TOOL_NAMES : toolsOffered(opts.backend);
  return names.map((name) => {
    const schema = TOOL_ARGS[name];
    const { $schema: _ignored, description, ...parameters } = z.toJSONSchema(schema) as Record<string, unknown>;
    return {
      type: "function" as const,
      function: { name, description: typeof description === "string" ? description : name, parameters },
    };
  });
}
