import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { Logger } from "pino";
import { toHttpError } from "./http-errors.js";
import { tokenMatches } from "./auth.js";
import type { ApiDeps } from "./ports.js";
import { matchRoute } from "./routes.js";
import { MiniAgentError } from "../errors.js";
import { runLogger } from "../log/logger.js";

/**
 * The /v1 API on node:http. No framework: about a dozen fixed routes, and the
 * parts a framework would add (body parsing, validation, error shape) must be
 * ours anyway to meet the cap, the strict zod contracts and the error body.
 */
export interface ApiServerOptions {
  deps: ApiDeps;
  log: Logger;
  /** when set, every request must carry `Authorization: Bearer <token>` (the TCP listener) */
  token?: string;
}

export function createApiServer(opts: ApiServerOptions): http.Server {
  let requestCounter = 0;
  const server = http.createServer((req, res) => {
    void handle(req, res, opts, ++requestCounter);
  });
  // A long-poll may wait up to maxWaitMs; keep the default request timeout above it.
  server.requestTimeout = opts.deps.maxWaitMs + 60_000;
  server.headersTimeout = 30_000;
  return server;
}

async function handle(req: IncomingMessage, res: ServerResponse, opts: ApiServerOptions, reqId: number): Promise<void> {
  let log = opts.log.child({ reqId });
  const method = req.method ?? "GET";
  const url = new URL(req.url ?? "/", "http://mini-agent.invalid");
  try {
    if (opts.token !== undefined && !tokenMatches(req, opts.token)) {
      req.resume();
      throw new MiniAgentError("unauthorized", "missing or wrong bearer token");
    }
    const match = matchRoute(method, url.pathname);
    if ("error" in match) {
      req.resume();
      if (match.error === "method_not_allowed") throw new MiniAgentError("invalid_request", `${method} is not allowed on ${url.pathname}`);
      throw new MiniAgentError("not_found", `no such endpoint: ${method} ${url.pathname}`);
    }
    // every line about one run carries its id (STYLE: child logger per run)
    if (url.pathname.startsWith("/v1/runs/") && match.params[0]) log = runLogger(log, match.params[0].slice(0, 128));
    const result = await match.route.handle({ req, params: match.params, query: url.searchParams, deps: opts.deps });
    if ("text" in result) {
      send(res, 200, result.contentType, result.text);
    } else {
      send(res, result.status ?? 200, "application/json", JSON.stringify(result.json));
    }
    log.debug({ method, path: url.pathname, status: res.statusCode }, "request");
  } catch (err) {
    const { status, body } = toHttpError(err);
    if (status >= 500 && body.error.code === "internal") log.error({ err, method, path: url.pathname }, "request failed");
    else log.info({ method, path: url.pathname, status, code: body.error.code }, "request refused");
    const headers: Record<string, string> = {};
    if (status === 401) headers["www-authenticate"] = "Bearer";
    // 413: close so the unread rest of the body is not parsed as the next request
    if (status === 413) headers.connection = "close";
    send(res, status, "application/json", JSON.stringify(body), headers);
  }
}

function send(res: ServerResponse, status: number, contentType: string, payload: string, extra: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(status, { "content-type": `${contentType}; charset=utf-8`, "cache-control": "no-store", ...extra });
  res.end(payload);
}
