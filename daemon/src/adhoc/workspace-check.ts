import fs from "node:fs";
import path from "node:path";
import { MiniAgentError } from "../errors.js";
import { systemFolderOf, systemFolderRefusal } from "../workspace/index.js";

/**
 * An ad-hoc run works IN PLACE on the user's folder, so the folder must be a
 * project, not something whose every file would become writable: never the
 * root, a system folder (workspace/system-folders.ts), a home folder, or the
 * daemon's own state (ledger, baselines, sockets).
 */
export interface WorkspaceLimits {
  stateDir: string;
  /** the daemon user's home folders (passwd and $HOME), as the entry point found them */
  homeDirs: readonly string[];
}

function real(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

const inside = (child: string, parent: string) => child === parent || child.startsWith(parent.endsWith("/") ? parent : parent + "/");

/** The workspace's real path, or a typed refusal (`invalid_workspace`) that says why. */
export function checkWorkspace(workspace: string, limits: WorkspaceLimits): string {
  const refuse = (why: string) => new MiniAgentError("invalid_workspace", `workspace ${workspace} ${why}`);
  if (!path.isAbsolute(workspace)) throw refuse("is not an absolute path");
  let st: fs.Stats;
  try {
    st = fs.statSync(workspace);
  } catch {
    throw refuse("does not exist");
  }
  if (!st.isDirectory()) throw refuse("is not a folder");
  const ws = real(workspace);
  if (ws === "/") throw refuse("is the root folder; give the project's folder");
  const system = systemFolderOf(ws);
  if (system) throw refuse(systemFolderRefusal(workspace, ws, system));
  const homes = new Set([...limits.homeDirs.filter(Boolean).map(real), "/root"]);
  if (homes.has(ws) || /^\/home\/[^/]+$/.test(ws)) throw refuse("is a home folder; give the project's folder");
  if (ws === "/home" || [...homes].some((h) => inside(h, ws))) throw refuse("contains a home folder; give the project's folder");
  const state = real(limits.stateDir);
  if (inside(ws, state)) throw refuse("is inside the daemon's state dir");
  if (inside(state, ws)) throw refuse("contains the daemon's state dir");
  return ws;
}
