import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { ERROR_CODES, type MiniAgentError } from "../../../daemon/src/errors.js";
import { TOOLS, type McpApi, type ToolDefaults } from "./tools.js";

/**
 * One MCP server over the daemon's API. It holds no state of its own: every
 * tool call and resource read is one daemon request, so two servers (or a
 * restarted one) see exactly what the daemon has.
 */
export interface McpServerDeps {
  api: McpApi;
  defaults: ToolDefaults;
  version: string;
  /** how the user runs the client against this daemon (`--socket S`), appended to a refresh command */
  commandSuffix: string;
}

export function createMcpServer(deps: McpServerDeps): McpServer {
  const server = new McpServer({ name: "mini-agent", version: deps.version }, { capabilities: { logging: {} } });
  for (const t of TOOLS) {
    server.registerTool(
      t.name,
      { title: t.title, description: t.description, inputSchema: t.input, outputSchema: t.output },
      // biome-ignore lint/suspicious/noExplicitAny: each spec's args match its own input schema, which the SDK has just checked
      async (args: any): Promise<CallToolResult> => {
        try {
          const out = (await t.call(deps.api, args, deps.defaults)) as Record<string, unknown>;
          return { content: [{ type: "text", text: t.summary(out) }], structuredContent: out };
        } catch (err) {
          return refusal(err, deps.commandSuffix);
        }
      },
    );
  }
  registerRunResources(server, deps.api);
  return server;
}

/** A daemon refusal as a tool error the calling agent can read: the code, the reason, the command a human runs. Never a stack. */
function refusal(err: unknown, suffix: string): CallToolResult {
  if (!isCodedError(err)) {
    return { isError: true, content: [{ type: "text", text: "internal: the MCP server failed to handle the call" }] };
  }
  const refresh = typeof err.details?.refresh_command === "string" ? `${err.details.refresh_command}${suffix ? ` ${suffix}` : ""}` : null;
  const text = `${err.code}: ${err.message}${refresh ? `\nA human runs: ${refresh}` : ""}`;
  // text only: the SDK's Client checks structuredContent against the tool's OUTPUT schema even on an error
  return { isError: true, content: [{ type: "text", text }] };
}

/**
 * Recognised by shape, not by class: in the built client this module is loaded
 * beside the one-file bundle, and the API client's errors are the bundle's copy
 * of MiniAgentError, another class than the one this module would import.
 */
function isCodedError(err: unknown): err is Pick<MiniAgentError, "code" | "message" | "details"> {
  const code = (err as { code?: unknown } | null)?.code;
  return err instanceof Error && typeof code === "string" && (ERROR_CODES as readonly string[]).includes(code);
}

/** A run's trace and Verifier evidence, read through the daemon like `trace` and `status` read them. */
function registerRunResources(server: McpServer, api: McpApi): void {
  server.registerResource(
    "run-trace",
    new ResourceTemplate("mini-agent://runs/{id}/trace", { list: undefined }),
    { title: "A run's trace (JSONL)", mimeType: "application/x-ndjson" },
    async (uri, { id }) => ({ contents: [{ uri: uri.href, mimeType: "application/x-ndjson", text: await api.trace(String(id)) }] }),
  );
  server.registerResource(
    "run-evidence",
    new ResourceTemplate("mini-agent://runs/{id}/evidence", { list: undefined }),
    { title: "A run's Verifier evidence (JSON)", mimeType: "application/json" },
    async (uri, { id }) => {
      const { run } = await api.getRun(String(id));
      return { contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify(run.verification) }] };
    },
  );
}
