import type { ApiClient } from "../api-client.js";
import { McpOptionError, resolveMcpOptions } from "./options.js";

/**
 * `mini-agent-client mcp`: options first (a bad --http or token file is
 * refused before anything listens), then the SDK, loaded only for this
 * command so every other command's start-up stays as it was.
 */
export interface McpCommandContext {
  api: ApiClient;
  cwd: string;
  commandPrefix: string;
  program: string;
  err(s: string): void;
}

/** the tool set's version, told to MCP clients; bumped when a tool's contract changes */
const TOOLSET_VERSION = "1.0.0";

export async function mcpCommand(opts: { workspace?: string; http?: string; tokenFile?: string }, ctx: McpCommandContext): Promise<void> {
  const options = resolveMcpOptions(opts, ctx.cwd);
  const { serveMcp } = await import("./index.js");
  await serveMcp({ api: ctx.api, options, version: TOOLSET_VERSION, commandSuffix: ctx.commandPrefix, err: ctx.err });
}

export { McpOptionError };
