import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Agent } from "undici";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { toolDescriptions } from "../../daemon/src/tools/descriptions.js";
import { toolCallMessage, toolResultMessage } from "../../daemon/src/context/messages.js";
import { createCredentialSource } from "../../daemon/src/credentials/credential-source.js";
import { isMiniAgentError } from "../../daemon/src/errors.js";
import { resolveLiveModelConfig } from "../../daemon/src/models/live/config.js";
import { ARGUMENTS_NOT_JSON_KEY, INVALID_OUTPUT_TOOL } from "../../daemon/src/models/live/decode.js";
import { LiveModel, type LiveModelOptions } from "../../daemon/src/models/live/live-model.js";
import { createLogger } from "../../daemon/src/log/logger.js";
import { Writable } from "node:stream";
import type { ModelView } from "../../daemon/src/models/model.js";
import { validateToolCall } from "../../daemon/src/tools/validate.js";
import { errorReply, startFakeProvider, textReply, toolCallReply, type FakeProvider, type Reply } from "./openai-server.js";

const KEY = "sk-live-test-canary-0123456789abcdefXYZ";

/** OpenAI `tools` generated from the zod contracts */
function tools(): Array<Record<string, unknown>> {
  return toolDescriptions() as unknown as Array<Record<string, unknown>>;
}

function view(messages: Array<Record<string, unknown>> = [{ role: "system", content: "RUN_STATE {}" }]): ModelView {
  return { runId: "run_1", messages, tools: tools() };
}

describe("live provider against a local OpenAI-compatible server", () => {
  let dir: string;
  let server: FakeProvider | null = null;
  let dispatcher: Agent;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "mini-agent-live-"));
    fs.writeFileSync(path.join(dir, "credentials.json"), JSON.stringify({ api_key: KEY }), { mode: 0o600 });
    dispatcher = new Agent();
  });
  afterEach(async () => {
    await server?.close();
    server = null;
    await dispatcher.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function model(replies: Reply[] | ((i: number) => Reply), extra: Record<string, unknown> = {}, log?: LiveModelOptions["log"]) {
    server = await startFakeProvider((_req, i) => (typeof replies === "function" ? replies(i) : (replies[i] ?? errorReply(500, "script exhausted"))));
    const credentials = createCredentialSource({ env: new Map(), filePath: path.join(dir, "credentials.json") });
    const config = resolveLiveModelConfig({ MINI_AGENT_BASE_URL: server.baseUrl, MINI_AGENT_MODEL: "fake-model" }, extra);
    const live = new LiveModel({
      config,
      credentials,
      dispatcher,
      ...(log ? { log } : {}),
      preamble: [
        { role: "system", content: "PROTOCOL" },
        { role: "user", content: "PROJECT DATA" },
      ],
    });
    return { live, credentials, server };
  }

  it("maps a native tool call to a tool decision and sends the generated tool schemas, the key ONLY in Authorization", async () => {
    const { live, credentials, server } = await model([toolCallReply("read_file", { path: "src/linkcheck.js" }, "call_abc")]);
    expect(credentials.reads).toBe(0); // building the model touched nothing
    const turn = await live.decide(view(), new AbortController().signal);
    expect(turn.decision).toEqual({ kind: "tool", call: { call_id: "call_abc", name: "read_file", arguments: { path: "src/linkcheck.js" } } });
    expect(turn.usage).toEqual({ prompt_tokens: 120, completion_tokens: 30 });
    expect(server.requests).toHaveLength(1);
    const req = server.requests[0]!;
    expect(req.url).toBe("/v1/chat/completions");
    expect(req.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(req.raw).not.toContain(KEY);
    const otherHeaders = Object.entries(req.headers).filter(([k]) => k !== "authorization");
    expect(JSON.stringify(otherHeaders)).not.toContain(KEY);
    expect(req.body.tools).toEqual(tools());
    expect(req.body.parallel_tool_calls).toBe(false);
    expect(req.body.model).toBe("fake-model");
    // one leading system message (protocol + run summary), then the project data
    const msgs = req.body.messages as Array<Record<string, unknown>>;
    expect(msgs[0]).toEqual({ role: "system", content: "PROTOCOL\n\nRUN_STATE {}" });
    expect(msgs[1]).toEqual({ role: "user", content: "PROJECT DATA" });
    expect(msgs.filter((m) => m.role === "system")).toHaveLength(1);
  });

  it("sends assistant tool_calls and their tool results as pairs, and reads the key once for many turns", async () => {
    const { live, credentials, server } = await model([textReply("I will read the source first."), textReply("FINAL: fixed nested links")]);
    const call = { call_id: "call_1", name: "read_file", arguments: { path: "src/a.js" } };
    const messages = [
      { role: "system", content: "RUN_STATE {}" },
      toolCallMessage(call),
      toolResultMessage({ call_id: "call_1", ok: true, data: { text: "x" }, error: null, truncated: false }, "read_file"),
    ];
    const first = await live.decide(view(messages), new AbortController().signal);
    const second = await live.decide(view(messages), new AbortController().signal);
    expect(first.decision).toEqual({ kind: "plan", text: "I will read the source first." });
    expect(second.decision).toEqual({ kind: "final", text: "fixed nested links" });
    expect(credentials.reads).toBe(1);
    const sent = server.requests[0]!.body.messages as Array<Record<string, unknown>>;
    const assistantAt = sent.findIndex((m) => m.role === "assistant");
    expect(sent[assistantAt]).toEqual(toolCallMessage(call));
    expect(sent[assistantAt + 1]).toMatchObject({ role: "tool", tool_call_id: "call_1" });
  });

  it("regression: malformed tool arguments become an invalid_fields observation, not a crash", async () => {
    const { live } = await model([toolCallReply("apply_patch", '{"path": "src/a.js", "old": "x",', "call_bad")]);
    const turn = await live.decide(view(), new AbortController().signal);
    expect(turn.decision.kind).toBe("tool");
    if (turn.decision.kind !== "tool") return;
    expect(turn.decision.call.name).toBe("apply_patch");
    expect(Object.keys(turn.decision.call.arguments)).toEqual([ARGUMENTS_NOT_JSON_KEY]);
    const outcome = validateToolCall(turn.decision.call);
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) {
      expect(outcome.result.error?.code).toBe("invalid_fields");
      expect(outcome.result.call_id).toBe("call_bad");
    }
  });

  it("an empty reply and a provider call id that is not a valid id still give a decision the host can answer", async () => {
    const { live } = await model([textReply("   "), toolCallReply("show_diff", "", "call with spaces!")]);
    const empty = await live.decide(view(), new AbortController().signal);
    expect(empty.decision.kind === "tool" && empty.decision.call.name).toBe(INVALID_OUTPUT_TOOL);
    if (empty.decision.kind === "tool") expect(validateToolCall(empty.decision.call)).toMatchObject({ ok: false, result: { error: { code: "unknown_tool" } } });
    const diff = await live.decide(view(), new AbortController().signal);
    expect(diff.decision.kind).toBe("tool");
    if (diff.decision.kind === "tool") {
      expect(diff.decision.call.call_id).toMatch(/^call_[0-9a-f]{24}$/);
      expect(validateToolCall(diff.decision.call).ok).toBe(true);
    }
  });

  it.each([
    ["429 with Retry-After", errorReply(429, "rate limited", { "retry-after": "2" }), 429],
    ["500", errorReply(500, "upstream exploded"), 500],
    ["503", errorReply(503, "overloaded"), 503],
  ])("%s is a transient model_error (the runtime may retry it)", async (_name, reply, status) => {
    const { live, server } = await model(() => reply);
    const err = await live.decide(view(), new AbortController().signal).catch((e: unknown) => e);
    expect(isMiniAgentError(err, "model_error")).toBe(true);
    if (isMiniAgentError(err)) expect(err.details).toMatchObject({ transient: true, status });
    if (status === 429 && isMiniAgentError(err)) expect(err.details?.retry_after_ms).toBe(2000);
    expect(server.requests).toHaveLength(1); // the provider never retries by itself
  });

  it("a provider that never answers times out as a transient model_error", async () => {
    const { live } = await model(() => ({ hang: true }), { request_timeout_ms: 300 });
    const err = await live.decide(view(), new AbortController().signal).catch((e: unknown) => e);
    expect(isMiniAgentError(err, "model_error")).toBe(true);
    if (isMiniAgentError(err)) expect(err.details).toMatchObject({ transient: true, kind: "timeout" });
  });

  it("regression: the runtime's per-call deadline (AbortSignal.timeout) is a transient timeout, not a cancel", async () => {
    const { live } = await model(() => ({ hang: true }));
    const err = await live.decide(view(), AbortSignal.timeout(200)).catch((e: unknown) => e);
    expect(isMiniAgentError(err, "model_error")).toBe(true);
    if (isMiniAgentError(err)) expect(err.details).toMatchObject({ transient: true, kind: "timeout" });
  });

  it("a connection reset is a transient model_error", async () => {
    const { live } = await model(() => ({ reset: true }));
    const err = await live.decide(view(), new AbortController().signal).catch((e: unknown) => e);
    expect(isMiniAgentError(err, "model_error")).toBe(true);
    if (isMiniAgentError(err)) expect(err.details).toMatchObject({ transient: true, kind: "network" });
  });

  it("regression: a 401 that echoes the key is a non-transient model_error whose message never contains the key", async () => {
    const { live } = await model(() => errorReply(401, `Incorrect API key provided: ${KEY}. You can find your API key at https://platform.example/keys.`));
    const err = await live.decide(view(), new AbortController().signal).catch((e: unknown) => e);
    expect(isMiniAgentError(err, "model_error")).toBe(true);
    if (!isMiniAgentError(err)) return;
    expect(err.details).toMatchObject({ transient: false, status: 401 });
    expect(err.message).toContain("HTTP 401");
    expect(err.message).toContain("Incorrect API key provided");
    expect(err.message).not.toContain(KEY);
    expect(err.message).not.toContain(KEY.slice(0, 12));
  });

  it("a 200 whose body is not the Chat Completions format is refused as model_error, not trusted", async () => {
    const { live } = await model(() => ({ status: 200, body: { choices: [{ message: { content: 42 } }] } }));
    const err = await live.decide(view(), new AbortController().signal).catch((e: unknown) => e);
    expect(isMiniAgentError(err, "model_error")).toBe(true);
    if (isMiniAgentError(err)) expect(err.details).toMatchObject({ transient: false, kind: "invalid_response" });
  });

  it("cancelling the run aborts the request with code cancelled", async () => {
    const { live, server } = await model(() => ({ hang: true }));
    const ac = new AbortController();
    const pending = live.decide(view(), ac.signal).catch((e: unknown) => e);
    while (server.requests.length === 0) await new Promise((r) => setTimeout(r, 10));
    ac.abort();
    const err = await pending;
    expect(isMiniAgentError(err, "cancelled")).toBe(true);
  });

  it("JSON-action mode: no tools field, tools described in the prompt, tool pairs rewritten, invalid output becomes an observation", async () => {
    const { live, server } = await model(
      [textReply('```json\n{"kind":"tool","call":{"name":"read_file","arguments":{"path":"README.md"}}}\n```'), textReply("I think I am done")],
      { mode: "json" },
    );
    const call = { call_id: "call_1", name: "search", arguments: { query: "root" } };
    const messages = [
      { role: "system", content: "RUN_STATE {}" },
      toolCallMessage(call),
      toolResultMessage({ call_id: "call_1", ok: true, data: [], error: null, truncated: false }, "search"),
    ];
    const first = await live.decide(view(messages), new AbortController().signal);
    expect(first.decision.kind === "tool" && first.decision.call.name).toBe("read_file");
    if (first.decision.kind === "tool") expect(validateToolCall(first.decision.call).ok).toBe(true);
    const body = server.requests[0]!.body;
    expect(body.tools).toBeUndefined();
    const sent = body.messages as Array<Record<string, unknown>>;
    expect(sent.some((m) => m.role === "tool" || "tool_calls" in m)).toBe(false);
    expect(String(sent[0]!.content)).toContain("apply_patch");
    const second = await live.decide(view(messages), new AbortController().signal);
    expect(second.decision.kind === "tool" && second.decision.call.name).toBe(INVALID_OUTPUT_TOOL);
  });

  it("logs one data line per request, with outcome and usage but never the key or the messages", async () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk, _enc, cb) => (lines.push(String(chunk)), cb()) });
    const log = createLogger({ level: "debug", destination: sink });
    const { live } = await model([toolCallReply("read_file", { path: "SECRET_PATH_IN_MESSAGES.js" }), errorReply(401, `bad key ${KEY}`)], {}, log);
    await live.decide(view([{ role: "user", content: "MESSAGE CANARY" }]), new AbortController().signal);
    await live.decide(view(), new AbortController().signal).catch(() => undefined);
    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(parsed).toHaveLength(2);
    expect(parsed[0]).toMatchObject({ runId: "run_1", model: "fake-model", decision: "tool", finish_reason: "tool_calls", usage: { prompt_tokens: 120 } });
    expect(parsed[1]).toMatchObject({ code: "model_error", transient: false, status: 401 });
    const all = lines.join("");
    for (const leak of [KEY, "MESSAGE CANARY", "SECRET_PATH_IN_MESSAGES"]) expect(all).not.toContain(leak);
  });
});
