import net from "node:net";
import path from "node:path";
import { readTokenFile } from "../../../daemon/src/credentials/token-file.js";

/**
 * `mini-agent-client mcp` options, checked before anything listens: stdio by
 * default; `--http HOST:PORT` only on a loopback address (the server speaks for
 * the daemon's sandboxes, so it must never be reachable from another machine),
 * and only with a bearer token read from a file nobody else can read.
 */
export interface McpOptions {
  /** the workspace a tool call uses when it names none (absolute) */
  workspace?: string;
  http?: { host: string; port: number; token: string };
}

export class McpOptionError extends Error {}

const LOOPBACK_NAMES = new Set(["localhost"]);
/** a token shorter than this is guessable: the daemon's TCP listener asks the same (config/daemon-config.ts) */
const MIN_TOKEN_CHARS = 16;

export function parseHttpAddress(value: string): { host: string; port: number } {
  const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(value);
  if (!m) throw new McpOptionError(`--http ${JSON.stringify(value)}: give HOST:PORT on loopback, e.g. --http 127.0.0.1:8765`);
  const host = m[1]!.replace(/^\[|\]$/g, "");
  const port = Number(m[2]);
  if (port > 65_535) throw new McpOptionError(`--http: port ${port} is out of range (0-65535)`);
  if (!isLoopback(host)) throw new McpOptionError(`--http: ${host} is not a loopback address; the MCP server only listens on 127.0.0.1, ::1 or localhost`);
  return { host, port };
}

export function isLoopback(host: string): boolean {
  if (LOOPBACK_NAMES.has(host.toLowerCase())) return true;
  if (net.isIPv4(host)) return host.startsWith("127.");
  if (net.isIPv6(host)) return host === "::1";
  return false;
}

/** Throws McpOptionError (a usage error) or the token file's MiniAgentError (credentials_insecure / credentials_missing). */
export function resolveMcpOptions(opts: { workspace?: string; http?: string; tokenFile?: string }, cwd: string): McpOptions {
  if (opts.tokenFile !== undefined && opts.http === undefined) throw new McpOptionError("--token-file is for --http; stdio needs no token");
  const out: McpOptions = {};
  if (opts.workspace !== undefined) out.workspace = path.resolve(cwd, opts.workspace);
  if (opts.http !== undefined) {
    const addr = parseHttpAddress(opts.http);
    if (opts.tokenFile === undefined) throw new McpOptionError("--http needs --token-file FILE (mode 0600) holding the bearer token clients send");
    out.http = { ...addr, token: readTokenFile(path.resolve(cwd, opts.tokenFile), MIN_TOKEN_CHARS) };
  }
  return out;
}
