import { z } from "zod";

/**
 * The Chat Completions response as far as mini-agent reads it. These schemas are
 * NOT strict on purpose: every provider adds its own fields (id, created,
 * system_fingerprint, logprobs, reasoning_content...) and refusing those would
 * refuse every real endpoint. What we read is typed and bounded; the rest is ignored.
 */
export const WireToolCall = z.object({
  id: z.string().max(512).nullish(),
  type: z.string().max(64).nullish(),
  function: z.object({
    name: z.string().max(512),
    // OpenAI sends a JSON string; some OpenAI-compatible servers send the object itself
    arguments: z.union([z.string(), z.record(z.string(), z.unknown())]).nullish(),
  }),
});
export type WireToolCall = z.infer<typeof WireToolCall>;

export const WireMessage = z.object({
  role: z.string().max(64).nullish(),
  content: z.string().nullish(),
  tool_calls: z.array(WireToolCall).max(64).nullish(),
});
export type WireMessage = z.infer<typeof WireMessage>;

export const WireUsage = z.object({
  prompt_tokens: z.int().min(0).nullish(),
  completion_tokens: z.int().min(0).nullish(),
});

export const ChatCompletionResponse = z.object({
  choices: z
    .array(
      z.object({
        message: WireMessage,
        finish_reason: z.string().max(64).nullish(),
      }),
    )
    .min(1, "the provider returned no choices"),
  usage: WireUsage.nullish(),
});
export type ChatCompletionResponse = z.infer<typeof ChatCompletionResponse>;

/** `{error:{message}}` (OpenAI, vLLM) or `{error:"..."}` (llama.cpp, Ollama) */
export const ProviderErrorBody = z.object({
  error: z.union([z.string(), z.object({ message: z.string().nullish(), code: z.unknown().optional() })]),
});

export function errorText(body: unknown): string | null {
  const parsed = ProviderErrorBody.safeParse(body);
  if (!parsed.success) return null;
  const e = parsed.data.error;
  return typeof e === "string" ? e : (e.message ?? null);
}
