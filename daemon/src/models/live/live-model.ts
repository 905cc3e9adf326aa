import { createHash } from "node:crypto";
import type { Logger } from "pino";
import type { Dispatcher } from "undici";
import { isMiniAgentError } from "../../errors.js";
import { redactDeep } from "../../redact/index.js";
import type { CredentialSource } from "../../credentials/credential-source.js";
import type { Model, ModelTurn, ModelUsage, ModelView } from "../model.js";
import { providerHost, type LiveModelConfig } from "./config.js";
import { decodeJsonAction, decodeToolMessage } from "./decode.js";
import { postChatCompletion } from "./http.js";
import { Pacing, type PacingDeps } from "./pacing.js";
import { jsonActionInstructions, toJsonActionMessages } from "./json-action.js";
import type { ChatCompletionResponse } from "./wire.js";

type Message = Record<string, unknown>;

export interface LiveModelOptions {
  config: LiveModelConfig;
  /**
   * Read lazily, on the first request only (never in the constructor), so that
   * building a LiveModel for a run the gate then refuses cannot touch the key.
   * null: the endpoint needs no key (a local llama.cpp / Ollama / vLLM).
   */
  credentials: Pick<CredentialSource, "read"> | null;
  /**
   * Messages sent before the run's own view every turn: the protocol prompt and
   * the project context (context/project-context.ts). A function is called once,
   * on the first decide(): the workspace it describes may not exist yet when
   * the model is built (the gate runs before the workspace is prepared).
   */
  preamble?: Message[] | (() => Promise<Message[]>);
  /** undici dispatcher; default: undici's global one. Tests pass one that counts requests. */
  dispatcher?: Dispatcher;
  /** date of the isolation report the gate accepted, kept for the live run record */
  isolationReportGeneratedAt?: string;
  /** one line per request as data (never messages, never the key); default: silent */
  log?: Pick<Logger, "debug" | "warn">;
  /** clock and sleep for the backoff after transient failures; default: real time */
  pacing?: PacingDeps;
}

/** What the live run record needs to know about the model that drove the run. */
export interface LiveModelFacts {
  model: string;
  providerHost: string;
  mode: "tools" | "json";
  isolationReportGeneratedAt: string | null;
}

/**
 * A live OpenAI-compatible Chat Completions endpoint as a decision source. It
 * only PROPOSES: one Decision per call to decide(); the host validates it.
 * It never retries: a transient failure is thrown with details.transient=true
 * and the runtime retries at most twice (one home for the retry policy); the
 * model only paces the retried request (pacing.ts), since only it knows the
 * endpoint's Retry-After.
 */
export class LiveModel implements Model {
  readonly name: string;
  private readonly opts: LiveModelOptions;
  private apiKey: string | null | undefined;
  private preamble: Message[] | undefined;
  private readonly pacing: Pacing;

  constructor(opts: LiveModelOptions) {
    this.opts = opts;
    this.name = `live:${opts.config.model}`;
    this.pacing = new Pacing(opts.pacing);
  }

  async decide(view: ModelView, signal: AbortSignal): Promise<ModelTurn> {
    const preamble = await this.resolvePreamble();
    const started = performance.now();
    const meta = { runId: view.runId, model: this.opts.config.model, host: providerHost(this.opts.config) };
    let response: ChatCompletionResponse;
    try {
      // the key is read before the body is built, so the body is scrubbed of it too
      const apiKey = this.key();
      const body = this.requestBody(view, preamble);
      await this.pacing.beforeRequest(signal);
      response = await postChatCompletion({ config: this.opts.config, body, apiKey, dispatcher: this.opts.dispatcher, signal });
      this.pacing.succeeded();
    } catch (err) {
      if (isMiniAgentError(err)) this.pacing.failed(err);
      const code = isMiniAgentError(err) ? err.code : "internal";
      const details = isMiniAgentError(err) ? err.details : undefined;
      this.opts.log?.warn(
        { ...meta, code, transient: details?.transient === true, status: details?.status, ms: Math.round(performance.now() - started) },
        "model request failed",
      );
      throw err;
    }
    const choice = response.choices[0]!;
    // a stable seed: the same view gives the same derived call ids on a replayed turn
    const seed = createHash("sha256").update(view.runId).update(JSON.stringify(view.messages)).digest("hex");
    const used = usedCallIds(view.messages);
    const decision =
      this.opts.config.mode === "json" ? decodeJsonAction(choice.message.content ?? "", seed, used) : decodeToolMessage(choice.message, seed, used);
    const usage = usageOf(response);
    this.opts.log?.debug(
      { ...meta, ms: Math.round(performance.now() - started), finish_reason: choice.finish_reason ?? null, decision: decision.kind, usage },
      "model answered",
    );
    return usage === undefined ? { decision } : { decision, usage };
  }

  facts(): LiveModelFacts {
    const c = this.opts.config;
    return { model: c.model, providerHost: providerHost(c), mode: c.mode, isolationReportGeneratedAt: this.opts.isolationReportGeneratedAt ?? null };
  }

  /** Secrets a writer must scrub from anything it stores (the key, once it has been read). */
  redactionSecrets(): string[] {
    return typeof this.apiKey === "string" ? [this.apiKey] : [];
  }

  /** The key is fetched once, when the first request is about to be sent. */
  private key(): string | null {
    if (this.apiKey === undefined) this.apiKey = this.opts.credentials === null ? null : this.opts.credentials.read().value;
    return this.apiKey;
  }

  private async resolvePreamble(): Promise<Message[]> {
    if (this.preamble === undefined) {
      const p = this.opts.preamble ?? [];
      this.preamble = typeof p === "function" ? await p() : p;
    }
    return this.preamble;
  }

  private requestBody(view: ModelView, rawPreamble: Message[]): Record<string, unknown> {
    const { config } = this.opts;
    // what the model reads passes the daemon's one rule set (redact/) as it leaves: the run's
    // messages were redacted when the ledger stored them, but the project context is read from
    // the workspace each run, and the provider is the one sink outside this machine
    const known = this.redactionSecrets();
    const preamble = redactDeep(rawPreamble, known) as Message[];
    view = { ...view, messages: redactDeep(view.messages, known) as ModelView["messages"] };
    const base = { model: config.model, temperature: config.temperature, max_tokens: config.max_tokens, stream: false };
    if (config.mode === "json") {
      const instructions: Message = { role: "system", content: jsonActionInstructions(view.tools) };
      return { ...base, messages: mergeLeadingSystem([...preamble, instructions, ...toJsonActionMessages(view.messages)]) };
    }
    const messages = mergeLeadingSystem([...preamble, ...view.messages]);
    if (view.tools.length === 0) return { ...base, messages };
    // one call per turn: the Decision contract carries one call, and the paired
    // assistant/tool messages rebuilt from the ledger must match what was sent
    return { ...base, messages, tools: view.tools, tool_choice: "auto", parallel_tool_calls: false };
  }
}

/**
 * Several chat templates (llama.cpp, some vLLM models) accept ONE system message
 * and only at the start; the protocol prompt, the run summary and a compaction
 * marker are therefore joined into one.
 */
export function mergeLeadingSystem(messages: Message[]): Message[] {
  const systems: string[] = [];
  let i = 0;
  for (; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role !== "system" || typeof m.content !== "string") break;
    systems.push(m.content);
  }
  // system messages after the leading block (e.g. a compaction marker after project data) join it too
  const rest = messages.slice(i).filter((m) => {
    if (m.role === "system" && typeof m.content === "string") {
      systems.push(m.content);
      return false;
    }
    return true;
  });
  return systems.length === 0 ? rest : [{ role: "system", content: systems.join("\n\n") }, ...rest];
}

/** Call ids the run has already used, as far as the view shows them. */
function usedCallIds(messages: ReadonlyArray<Message>): Set<string> {
  const ids = new Set<string>();
  for (const m of messages) {
    if (typeof m.tool_call_id === "string") ids.add(m.tool_call_id);
    if (Array.isArray(m.tool_calls)) for (const c of m.tool_calls as Message[]) if (typeof c.id === "string") ids.add(c.id);
  }
  return ids;
}

function usageOf(response: ChatCompletionResponse): ModelUsage | undefined {
  const u = response.usage;
  if (!u || (u.prompt_tokens == null && u.completion_tokens == null)) return undefined;
  return { prompt_tokens: u.prompt_tokens ?? 0, completion_tokens: u.completion_tokens ?? 0 };
}
