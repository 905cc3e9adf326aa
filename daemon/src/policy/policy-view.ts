import fs from "node:fs";
import type { PolicyShowBody } from "../contracts/api-responses.js";
import type { ProfileName } from "../contracts/policy.js";
import { MiniAgentError } from "../errors.js";
import type { DaemonPolicy } from "./daemon-policy.js";
import { resolveRunPolicy } from "./run-policy.js";

/**
 * `policy show`: the policy a run would get now, resolved exactly as createRun
 * resolves it (resolveRunPolicy), so what a user reads is what a run gets.
 */
export function createPolicyView(daemon: DaemonPolicy): { show(input: { profile?: ProfileName; workspace?: string }): PolicyShowBody } {
  return {
    show({ profile, workspace }) {
      if (workspace !== undefined && !isDir(workspace)) throw new MiniAgentError("invalid_request", `${workspace} is not a folder`);
      const { policy, trace } = resolveRunPolicy(daemon, profile, workspace ?? null);
      return { kind: "policy", policy, source_digest: daemon.digest, workspace_file: trace.workspace_file };
    },
  };
}

function isDir(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}
