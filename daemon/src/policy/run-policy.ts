import path from "node:path";
import type { EffectivePolicy, ProfileName } from "../contracts/policy.js";
import type { DaemonPolicy } from "./daemon-policy.js";
import type { WorkspaceVerifyTrace } from "./workspace-verify.js";
import { resolveEffectivePolicy } from "./effective.js";
import { readWorkspacePolicy, WORKSPACE_POLICY_FILE } from "./workspace-policy.js";

/** What the trace records of a run's policy: enough to tell which files made it, no host paths. */
export interface PolicyTrace {
  profile: ProfileName;
  /** the daemon's policy file name, or "built-in" */
  source: string;
  source_digest: string | null;
  /** the workspace's own rules file, when it has one (it only tightens) */
  workspace_file: string | null;
  workspace_digest: string | null;
  tightened_by_workspace: boolean;
  /** the workspace file's verify commands, each with the command-policy rule that let it run (policy/workspace-verify.ts) */
  workspace_verify_commands?: WorkspaceVerifyTrace[];
}

/**
 * The policy a run gets: the daemon's file, the profile (`--policy-profile`,
 * else the file's default_profile, else interactive) and the rules file of
 * `root` (the workspace, or a fixture's repo/ that becomes the workspace; null: none).
 * Throws `policy_invalid` for a broken workspace file, before anything exists.
 */
export function resolveRunPolicy(daemon: DaemonPolicy, profile: ProfileName | undefined, root: string | null): { policy: EffectivePolicy; trace: PolicyTrace } {
  const ws = root === null ? null : readWorkspacePolicy(root);
  const policy = resolveEffectivePolicy({
    file: daemon.file,
    source: daemon.source,
    ...(profile !== undefined && { profile }),
    workspace: ws?.rules ?? null,
  });
  return {
    policy,
    trace: {
      profile: policy.profile,
      source: daemon.source === null ? "built-in" : path.basename(daemon.source),
      source_digest: daemon.digest,
      workspace_file: ws ? WORKSPACE_POLICY_FILE : null,
      workspace_digest: ws?.digest ?? null,
      tightened_by_workspace: ws !== null,
    },
  };
}
