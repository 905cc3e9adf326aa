import crypto from "node:crypto";
import http from "node:http";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";

/**
 * Streamable HTTP on loopback (`mcp --http 127.0.0.1:PORT`). Stateless: a
 * fresh server and transport per request, so the process keeps nothing
 * between calls, as over stdio. Three locks, in order: the bearer token (a
 * constant-time compare), the SDK's DNS-rebinding check of Host and Origin
 * (a web page that rebinds a name to 127.0.0.1 sends its own Host), and
 * the loopback address itself, checked when the options were read.
 */
export interface HttpServeOptions {
  host: string;
  port: number;
  token: string;
  newServer(): McpServer;
  /** told the bound address once listening (the port when 0 was asked) */
  onListening(addr: { host: string; port: number }): void;
}

const MCP_PATH = "/mcp";

export async function serveHttp(opts: HttpServeOptions): Promise<http.Server> {
  const expected = Buffer.from(`Bearer ${opts.token}`);
  let allowedHosts: string[] = [];
  const server = http.createServer(async (req, res) => {
    const got = Buffer.from(req.headers.authorization ?? "");
    if (got.length !== expected.length || !crypto.timingSafeEqual(got, expected)) {
      res.writeHead(401, { "content-type": "application/json", "www-authenticate": "Bearer" });
      res.end(
        JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message: "unauthorized: send Authorization: Bearer <token from --token-file>" }, id: null }),
      );
      return;
    }
    if (new URL(req.url ?? "/", "http://x").pathname !== MCP_PATH) {
      res.writeHead(404).end();
      return;
    }
    const mcp = opts.newServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableDnsRebindingProtection: true, allowedHosts });
    res.on("close", () => {
      void transport.close();
      void mcp.close();
    });
    try {
      await mcp.connect(transport);
      await transport.handleRequest(req, res);
    } catch {
      if (!res.headersSent)
        res
          .writeHead(500, { "content-type": "application/json" })
          .end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32603, message: "internal error" }, id: null }));
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  const port = (server.address() as { port: number }).port;
  // the names a local client may use in Host for this port; anything else is a rebinding attempt
  allowedHosts = [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`];
  opts.onListening({ host: opts.host, port });
  return server;
}
