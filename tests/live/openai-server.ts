import http from "node:http";
import type { AddressInfo, Socket } from "node:net";

/**
 * A local OpenAI-compatible Chat Completions server for tests: 127.0.0.1, port 0,
 * real wire format. Every request is counted and recorded (headers + parsed body)
 * so tests can assert what mini-agent SENT, not just what it did with answers.
 */
export interface RecordedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  raw: string;
  body: Record<string, unknown>;
}

export type Reply =
  | { status: number; body: unknown; headers?: Record<string, string> }
  /** accept the request and never answer (a provider that hangs) */
  | { hang: true }
  /** destroy the socket without an answer (connection reset) */
  | { reset: true };

export type Responder = (req: RecordedRequest, index: number) => Reply;

export interface FakeProvider {
  baseUrl: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export async function startFakeProvider(responder: Responder): Promise<FakeProvider> {
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        body = {};
      }
      const recorded: RecordedRequest = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, raw, body };
      requests.push(recorded);
      const reply = responder(recorded, requests.length - 1);
      if ("hang" in reply) return;
      if ("reset" in reply) {
        req.socket.destroy();
        return;
      }
      const text = typeof reply.body === "string" ? reply.body : JSON.stringify(reply.body);
      res.writeHead(reply.status, { "content-type": "application/json", ...(reply.headers ?? {}) });
      res.end(text);
    });
  });
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

let completionSeq = 0;

/** A 200 answer in the real Chat Completions shape, with a tool call. */
export function toolCallReply(name: string, args: unknown, id = `call_${++completionSeq}`, usage = { prompt_tokens: 120, completion_tokens: 30 }): Reply {
  return {
    status: 200,
    body: {
      id: `chatcmpl-${completionSeq}`,
      object: "chat.completion",
      created: 1_700_000_000,
      model: "fake-model",
      system_fingerprint: "fp_test",
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: null,
            tool_calls: [{ id, type: "function", function: { name, arguments: typeof args === "string" ? args : JSON.stringify(args) } }],
          },
          logprobs: null,
          finish_reason: "tool_calls",
        },
      ],
      usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
    },
  };
}

/** A 200 answer with plain assistant text (plan, FINAL, or a JSON action). */
export function textReply(content: string, usage = { prompt_tokens: 100, completion_tokens: 10 }): Reply {
  return {
    status: 200,
    body: {
      id: `chatcmpl-${++completionSeq}`,
      object: "chat.completion",
      created: 1_700_000_000,
      model: "fake-model",
      choices: [{ index: 0, message: { role: "assistant", content }, logprobs: null, finish_reason: "stop" }],
      usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
    },
  };
}

export function errorReply(status: number, message: string, headers?: Record<string, string>): Reply {
  return { status, body: { error: { message, type: "invalid_request_error", code: null } }, ...(headers ? { headers } : {}) };
}
