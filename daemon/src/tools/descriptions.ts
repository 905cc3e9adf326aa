import { z } from "zod";
import { TOOL_ARGS, TOOL_NAMES } from "../contracts/tool-call.js";

export interface OpenAiTool {
  type: "function";
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

/**
 * Tool descriptions for a model, GENERATED from the same zod schemas the host
 * validates with, so what the model is told and what the host accepts cannot
 * drift apart. OpenAI `tools` format.
 */
export function toolDescriptions(): OpenAiTool[] {
  return TOOL_NAMES.map((name) => {
    const schema = TOOL_ARGS[name];
    const { $schema: _ignored, description, ...parameters } = z.toJSONSchema(schema) as Record<string, unknown>;
    return {
      type: "function" as const,
      function: { name, description: typeof description === "string" ? description : name, parameters },
    };
  });
}
