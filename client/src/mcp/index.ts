import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { ApiClient } from "../../../client-lib/index.js";
import { serveHttp } from "./http.js";
import type { McpOptions } from "./options.js";
import { createMcpServer } from "./server.js";

export { McpOptionError, resolveMcpOptions, type McpOptions } from "./options.js";

export interface ServeMcpInput {
  api: ApiClient;
  options: McpOptions;
  version: string;
  commandSuffix: string;
  /** how the user starts this client: the approve command a person is told names it */
  program: string;
  /** where "listening on" goes: never stdout, which is the protocol's over stdio */
  err(s: string): void;
  stdin?: NodeJS.ReadableStream;
  stdout?: NodeJS.WritableStream;
}

/** Serves until the client hangs up (stdio) or the process is stopped (HTTP). */
export async function serveMcp(input: ServeMcpInput): Promise<void> {
  const newServer = () =>
    createMcpServer({ api: input.api, defaults: input.options, version: input.version, commandSuffix: input.commandSuffix, program: input.program });
  if (input.options.http) {
    const { host, port, token } = input.options.http;
    const server = await serveHttp({
      host,
      port,
      token,
      newServer,
      onListening: (a) => input.err(`mini-agent mcp listening on http://${a.host}:${a.port}/mcp\n`),
    });
    await new Promise<void>((resolve) => server.on("close", () => resolve()));
    return;
  }
  const server = newServer();
  const transport = new StdioServerTransport(input.stdin as never, input.stdout as never);
  await server.connect(transport);
  const closed = new Promise<void>((resolve) => {
    server.server.onclose = () => resolve();
  });
  // stdio has no close message: the client closing our stdin is the end of the conversation
  (input.stdin ?? process.stdin).once("end", () => void server.close());
  await closed;
}
