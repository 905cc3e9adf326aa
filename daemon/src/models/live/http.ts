import { request, type Dispatcher } from "undici";
import { z } from "zod";
import { MiniAgentError } from "../../errors.js";
import type { LiveModelConfig } from "./config.js";
import { redactText } from "../../redact/index.js";
import { ChatCompletionResponse, errorText } from "./wire.js";

/** Network failures worth a retry (the runtime retries at most twice). */
const TRANSIENT_NET_CODES = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "EPIPE",
  "ETIMEDOUT",
  "EAI_AGAIN",
  "UND_ERR_SOCKET",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "UND_ERR_CLOSED",
]);

export interface ChatRequest {
  config: LiveModelConfig;
  body: Record<string, unknown>;
  /** null for endpoints that need no key (a local llama.cpp or Ollama) */
  apiKey: string | null;
  /** injected so tests and the gate can observe or forbid every request */
  dispatcher: Dispatcher | undefined;
  signal: AbortSignal;
}

export function chatCompletionsUrl(config: Pick<LiveModelConfig, "base_url">): string {
  return `${config.base_url.replace(/\/+$/, "")}/chat/completions`;
}

/**
 * One POST /chat/completions. Returns the validated response or throws
 * MiniAgentError: `cancelled` when the caller aborted, `model_error` with
 * details.transient for timeouts, resets, 429 and 5xx, `model_error` without it
 * for everything else. The key is only ever put in the Authorization header and
 * is scrubbed from any provider text that comes back.
 */
export async function postChatCompletion(req: ChatRequest): Promise<ChatCompletionResponse> {
  const secrets = req.apiKey === null ? [] : [req.apiKey];
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), req.config.request_timeout_ms);
  const signal = AbortSignal.any([req.signal, timeout.signal]);
  const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json" };
  if (req.apiKey !== null) headers.authorization = `Bearer ${req.apiKey}`;
  try {
    const res = await request(chatCompletionsUrl(req.config), {
      method: "POST",
      headers,
      body: JSON.stringify(req.body),
      signal,
      dispatcher: req.dispatcher,
    });
    const text = await readCapped(res.body, req.config.max_response_bytes);
    if (res.statusCode < 200 || res.statusCode >= 300) throw statusError(res.statusCode, res.headers, text, secrets);
    return parseResponse(text);
  } catch (err) {
    if (err instanceof MiniAgentError) throw err;
    // The caller's signal may carry its own deadline (the runtime's per-call cap,
    // AbortSignal.timeout): that is a timeout to retry, not a user's cancel.
    const callerTimedOut = req.signal.aborted && isTimeoutReason(req.signal.reason);
    if (req.signal.aborted && !callerTimedOut) throw new MiniAgentError("cancelled", "model request cancelled", { cause: err });
    if (timeout.signal.aborted || callerTimedOut) {
      throw new MiniAgentError(
        "model_error",
        callerTimedOut ? "model request hit the per-call time limit" : `model request timed out after ${req.config.request_timeout_ms} ms`,
        {
          cause: err,
          details: { transient: true, kind: "timeout" },
        },
      );
    }
    const code = typeof (err as { code?: unknown }).code === "string" ? (err as { code: string }).code : "unknown";
    const transient = TRANSIENT_NET_CODES.has(code);
    throw new MiniAgentError("model_error", `model request failed (${code})`, {
      cause: err,
      details: { transient, kind: "network", net_code: code },
    });
  } finally {
    clearTimeout(timer);
  }
}

function isTimeoutReason(reason: unknown): boolean {
  return typeof reason === "object" && reason !== null && (reason as { name?: unknown }).name === "TimeoutError";
}

async function readCapped(body: AsyncIterable<Buffer> & { destroy(err?: Error): unknown }, cap: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > cap) {
      body.destroy();
      throw new MiniAgentError("model_error", `provider response exceeds ${cap} bytes`, { details: { transient: false, kind: "too_large" } });
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * Provider error messages are shown to users and stored in the ledger; some
 * providers echo (part of) the key back ("Incorrect API key provided: sk-ab***yz").
 * Redacted with the daemon's one rule set and the key itself, and capped: a
 * provider message is a hint, not a payload.
 */
export function providerMessage(text: string, secrets: readonly string[], cap = 400): string {
  const clean = redactText(text.replace(/\s+/g, " ").trim(), secrets);
  return clean.length > cap ? `${clean.slice(0, cap)}…` : clean;
}

function statusError(status: number, headers: Record<string, unknown>, text: string, secrets: string[]): MiniAgentError {
  let hint: string | null = null;
  try {
    hint = errorText(JSON.parse(text));
  } catch {
    hint = null;
  }
  const message = providerMessage(hint ?? text.slice(0, 400), secrets);
  const transient = status === 408 || status === 429 || status >= 500;
  const details: Record<string, unknown> = { transient, kind: "http_status", status };
  const retryAfter = retryAfterMs(headers["retry-after"]);
  if (retryAfter !== null) details.retry_after_ms = retryAfter;
  return new MiniAgentError("model_error", `provider answered HTTP ${status}${message ? `: ${message}` : ""}`, { details });
}

function retryAfterMs(value: unknown): number | null {
  if (typeof value !== "string") return null;
  const seconds = Number(value);
  return Number.isFinite(seconds) && seconds >= 0 ? Math.min(seconds * 1000, 600_000) : null;
}

function parseResponse(text: string): ChatCompletionResponse {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new MiniAgentError("model_error", "provider response is not JSON", { details: { transient: false, kind: "invalid_response" } });
  }
  const parsed = ChatCompletionResponse.safeParse(json);
  if (!parsed.success) {
    throw new MiniAgentError("model_error", `provider response does not match the Chat Completions format:\n${z.prettifyError(parsed.error)}`, {
      details: { transient: false, kind: "invalid_response" },
    });
  }
  return parsed.data;
}
