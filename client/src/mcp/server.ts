import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { ERROR_CODES, type MiniAgentError } from "../../../daemon/src/errors.js";
import { TOOLS, type McpApi, type ToolDefaults } from "./tools.js";
import { resolveWorkspaceArg } from "./workspace-arg.js";

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
  /** how the user starts this client (`mini-agent-client`, or `node /abs/cli.js`): the approve command names it */
  program: string;
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
          const asked = t.name === "sandbox_exec" ? approvalIdOf(err) : null;
          if (asked === null) return refusal(err, deps);
          try {
            // the person answers in their MCP client when it can ask them; the calling agent never does
            const out = await askThePerson(server, deps, asked, args);
            return out === null ? refusal(err, deps) : { content: [{ type: "text", text: t.summary(out) }], structuredContent: out };
          } catch (again) {
            return refusal(again, deps);
          }
        }
      },
    );
  }
  registerRunResources(server, deps.api);
  return server;
}

/** The approval id of a sandbox_exec the policy asks about, or null. */
function approvalIdOf(err: unknown): string | null {
  if (!isCodedError(err) || err.code !== "approval_required") return null;
  const id = err.details?.approval_id;
  return typeof id === "string" ? id : null;
}

/**
 * MCP elicitation: the human's own MCP client shows the question and returns
 * their answer, which is sent to the daemon as `approve`/`reject chk_…` would
 * send it; then the same call runs with the approval. Null when the client
 * cannot ask (the refusal then names the command a person runs).
 */
async function askThePerson(server: McpServer, deps: McpServerDeps, id: string, args: Record<string, unknown>): Promise<Record<string, unknown> | null> {
  if (!server.server.getClientCapabilities()?.elicitation) return null;
  const argv = Array.isArray(args.argv) ? (args.argv as string[]) : [];
  const answer = await server.server.elicitInput({
    mode: "form",
    message: `mini-agent: run \`${argv.join(" ")}\` in a sandbox (no network, a copy of the workspace, changes discarded)? The daemon's command policy asks a person first.`,
    requestedSchema: {
      type: "object",
      properties: { approve: { type: "boolean", title: "Run it", description: "yes runs this exact command once" } },
      required: ["approve"],
    },
  });
  const yes = answer.action === "accept" && answer.content?.approve === true;
  await deps.api.decideCheck(
    id,
    yes
      ? { decision: "approve" }
      : { decision: "reject", reason: `the person answered ${answer.action === "accept" ? "no" : answer.action} in the MCP client` },
  );
  if (!yes) throw Object.assign(new Error("the person did not approve it; nothing ran"), { code: "approval_rejected" });
  return (await deps.api.sandboxExec({
    ...(args as Parameters<McpApi["sandboxExec"]>[0]),
    workspace: resolveWorkspaceArg(typeof args.workspace === "string" ? args.workspace : undefined, deps.defaults.workspace),
    approval_id: id,
  })) as Record<string, unknown>;
}

/** A daemon refusal as a tool error the calling agent can read: the code, the reason, the command a human runs. Never a stack. */
function refusal(err: unknown, deps: Pick<McpServerDeps, "commandSuffix" | "program">): CallToolResult {
  if (!isCodedError(err)) {
    return { isError: true, content: [{ type: "text", text: "internal: the MCP server failed to handle the call" }] };
  }
  const suffix = deps.commandSuffix;
  const refresh = typeof err.details?.refresh_command === "string" ? `${err.details.refresh_command}${suffix ? ` ${suffix}` : ""}` : null;
  const id = approvalIdOf(err);
  const ask = id
    ? `\nA person approves it with: ${deps.program} approve ${id}${suffix ? ` ${suffix}` : ""} (or refuses: ${deps.program} reject ${id} --reason TEXT${suffix ? ` ${suffix}` : ""}); then call sandbox_exec again with approval_id "${id}". You cannot approve it yourself.`
    : "";
  const text = `${err.code}: ${err.message}${refresh ? `\nA human runs: ${refresh}` : ""}${ask}`;
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
