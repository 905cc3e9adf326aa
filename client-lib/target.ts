import path from "node:path";
import { resolveStateDir, statePath } from "../daemon/src/config/state-dir.js";
import { shellQuote } from "./quote.js";

/** Socket: --socket, else $MINI_AGENT_SOCKET, else <state dir>/daemon.sock (state dir resolved like the daemon's). */
export function resolveTarget(opts: Record<string, string | boolean | string[] | undefined>, io: { env: NodeJS.ProcessEnv; cwd: string }) {
  const stateDirFlag = typeof opts["state-dir"] === "string" ? path.resolve(io.cwd, opts["state-dir"]) : undefined;
  const stateDir = resolveStateDir(io.env, stateDirFlag);
  const socketFlag = typeof opts.socket === "string" ? path.resolve(io.cwd, opts.socket) : undefined;
  const socketPath = socketFlag ?? (io.env.MINI_AGENT_SOCKET ? path.resolve(io.cwd, io.env.MINI_AGENT_SOCKET) : statePath(stateDir, "socket"));
  const prefix = [
    ...(socketFlag ? ["--socket", shellQuote(socketFlag)] : []),
    ...(stateDirFlag && !socketFlag ? ["--state-dir", shellQuote(stateDirFlag)] : []),
  ].join(" ");
  return { socketPath, stateDir, prefix, explicitSocket: socketFlag !== undefined || Boolean(io.env.MINI_AGENT_SOCKET) };
}
