import fs from "node:fs";
import path from "node:path";
import { MiniAgentError } from "../../../daemon/src/errors.js";

/**
 * A tool call's `workspace` as the absolute path the daemon takes. An agent
 * working inside the server's --workspace naturally names a folder of it
 * relatively (`packages/api`, `.`); that is resolved against --workspace and
 * must stay inside it, by its name and by its real path (a link inside that
 * leads out is refused), so the server's one configured tree bounds what a
 * relative name can reach. An absolute path is passed on as given: the daemon
 * applies its own workspace refusals to every path either way.
 */
export function resolveWorkspaceArg(given: string | undefined, serverWorkspace: string | undefined): string {
  if (given === undefined) {
    if (serverWorkspace === undefined)
      throw new MiniAgentError("invalid_request", "no workspace: pass `workspace` (an absolute path) or start the server with --workspace DIR");
    return serverWorkspace;
  }
  if (path.isAbsolute(given)) return given;
  if (serverWorkspace === undefined)
    throw new MiniAgentError(
      "invalid_workspace",
      `workspace ${JSON.stringify(given)} is relative and this server has no --workspace to resolve it against; give an absolute path`,
    );
  const abs = path.resolve(serverWorkspace, given);
  if (!within(abs, serverWorkspace) || !within(realOr(abs), realOr(serverWorkspace)))
    throw new MiniAgentError("invalid_workspace", `workspace ${JSON.stringify(given)} leads outside the server's --workspace ${serverWorkspace}; nothing ran`);
  return abs;
}

function within(p: string, root: string): boolean {
  const r = path.relative(root, p);
  return r === "" || (!r.startsWith("..") && !path.isAbsolute(r));
}

/** the real path, or the path itself when it does not exist (the daemon then says it does not exist) */
function realOr(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return p;
  }
}
