import { z } from "zod";
import { MiniAgentError } from "../../errors.js";

/**
 * Settings of the live OpenAI-compatible provider. Resolved ONCE at the daemon's
 * edge (config file + environment) into this validated object; nothing deeper
 * reads process.env. The API key is deliberately NOT here: it is read lazily
 * from a credential source when the first request is sent (issue 6).
 */
export const LIVE_MODEL_DEFAULTS = {
  base_url: "https://api.openai.com/v1",
  temperature: 0,
  max_tokens: 4096,
  request_timeout_ms: 120_000,
  /** `tools`: native tool calling; `json`: one JSON action per turn for endpoints without tool calling */
  mode: "tools",
  /** a provider answer larger than this is refused rather than buffered */
  max_response_bytes: 4 * 1024 * 1024,
} as const;

const BaseUrl = z
  .url({ protocol: /^https?$/, error: "base_url must be an http(s) URL" })
  .refine((u) => {
    const parsed = new URL(u);
    // a user:password in the URL would travel into logs and the live run record
    return parsed.username === "" && parsed.password === "";
  }, "base_url must not carry credentials; put the key in MINI_AGENT_API_KEY or credentials.json")
  .refine((u) => new URL(u).search === "" && new URL(u).hash === "", "base_url must not carry a query or fragment");

/** 127.0.0.0/8, ::1, localhost: traffic that never leaves this machine. */
function isLoopback(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, "");
  return h === "localhost" || h === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

export const LiveModelConfig = z
  .strictObject({
    base_url: BaseUrl.default(LIVE_MODEL_DEFAULTS.base_url),
    model: z.string().min(1, "model is required: set MINI_AGENT_MODEL or `model` in the config file").max(256),
    temperature: z.number().min(0).max(2).default(LIVE_MODEL_DEFAULTS.temperature),
    max_tokens: z.int().min(1).max(1_000_000).default(LIVE_MODEL_DEFAULTS.max_tokens),
    request_timeout_ms: z.int().min(100).max(3_600_000).default(LIVE_MODEL_DEFAULTS.request_timeout_ms),
    mode: z.enum(["tools", "json"]).default(LIVE_MODEL_DEFAULTS.mode),
    max_response_bytes: z
      .int()
      .min(1024)
      .max(64 * 1024 * 1024)
      .default(LIVE_MODEL_DEFAULTS.max_response_bytes),
    /** plain http to another machine would carry the key in clear text; only with this set */
    allow_insecure_http: z.boolean().default(false),
  })
  .refine((c) => c.allow_insecure_http || new URL(c.base_url).protocol === "https:" || isLoopback(new URL(c.base_url).hostname), {
    message: "base_url uses plain http to another machine, which would send the API key in clear text; use https, or set MINI_AGENT_ALLOW_INSECURE_HTTP=1",
    path: ["base_url"],
  });
export type LiveModelConfig = z.infer<typeof LiveModelConfig>;
/** What a config file may say: every field optional, unknown fields refused by the strict schema. */
export type LiveModelConfigInput = Partial<z.input<typeof LiveModelConfig>>;

/** Environment names, most specific first; the OPENAI_* names are only fallbacks. */
const ENV_NAMES = {
  base_url: ["MINI_AGENT_BASE_URL", "OPENAI_BASE_URL"],
  model: ["MINI_AGENT_MODEL"],
  temperature: ["MINI_AGENT_TEMPERATURE"],
  max_tokens: ["MINI_AGENT_MAX_TOKENS"],
  request_timeout_ms: ["MINI_AGENT_REQUEST_TIMEOUT_MS"],
  mode: ["MINI_AGENT_MODEL_MODE"],
  allow_insecure_http: ["MINI_AGENT_ALLOW_INSECURE_HTTP"],
} as const;

const NUMERIC = new Set(["temperature", "max_tokens", "request_timeout_ms"]);

/**
 * Environment over config file over defaults. A value that does not parse fails
 * loudly with the name of the setting, never silently falls back to a default.
 */
export function resolveLiveModelConfig(env: NodeJS.ProcessEnv, fileConfig: unknown = {}): LiveModelConfig {
  if (fileConfig === null || typeof fileConfig !== "object" || Array.isArray(fileConfig)) {
    throw new MiniAgentError("invalid_request", "live model config must be an object");
  }
  const merged: Record<string, unknown> = { ...(fileConfig as Record<string, unknown>) };
  for (const [field, names] of Object.entries(ENV_NAMES)) {
    const name = names.find((n) => env[n] !== undefined && env[n] !== "");
    if (name === undefined) continue;
    const raw = env[name] as string;
    merged[field] = NUMERIC.has(field) ? envNumber(name, raw) : field === "allow_insecure_http" ? envFlag(name, raw) : raw;
  }
  // the one setting without a default: named with where to set it (zod alone said "expected string, received undefined → at model")
  if (merged.model === undefined) {
    throw new MiniAgentError(
      "invalid_request",
      "no live model is configured: set MINI_AGENT_MODEL (and MINI_AGENT_API_KEY) in the daemon's environment and restart it, or give `model` in its config file",
    );
  }
  const parsed = LiveModelConfig.safeParse(merged);
  if (!parsed.success) {
    throw new MiniAgentError("invalid_request", `live model configuration is invalid:\n${z.prettifyError(parsed.error)}`);
  }
  return parsed.data;
}

function envFlag(name: string, raw: string): boolean {
  if (raw === "1" || raw === "true") return true;
  if (raw === "0" || raw === "false") return false;
  throw new MiniAgentError("invalid_request", `${name} must be 1 or 0`);
}

function envNumber(name: string, raw: string): number {
  const n = Number(raw);
  if (raw.trim() === "" || !Number.isFinite(n)) {
    throw new MiniAgentError("invalid_request", `${name} must be a number, got ${JSON.stringify(raw.slice(0, 40))}`);
  }
  return n;
}

/** The only part of the provider URL a record or log may keep. */
export function providerHost(config: Pick<LiveModelConfig, "base_url">): string {
  return new URL(config.base_url).host;
}
