import path from "node:path";
import { PolicyFile, type PolicyRules } from "../contracts/policy.js";
import { MiniAgentError } from "../errors.js";
import { sha256Hex } from "../workspace/hash.js";
import { lineOfPath, parsePolicyText, readPolicyText } from "./policy-file.js";

/**
 * The daemon's own policy, loaded once at start-up (`--policy FILE`, default
 * `<state-dir>/policy.json`). `file` is null when the default file does not
 * exist: the built-in policy (policy/defaults.ts) applies. Every run resolves
 * its EffectivePolicy from this at creation and keeps it.
 */
export interface DaemonPolicy {
  file: PolicyFile | null;
  /** absolute path of the file, or null for the built-in policy */
  source: string | null;
  /** sha256 of the file's bytes, or null for the built-in policy */
  digest: string | null;
}

export const BUILTIN_DAEMON_POLICY: DaemonPolicy = { file: null, source: null, digest: null };

/** A broken file throws `policy_invalid` naming the file, the line and the reason; never a silent default. */
export function loadDaemonPolicy(file: string, opts: { named: boolean }): DaemonPolicy {
  const text = readPolicyText(file, !opts.named);
  if (text === null) return BUILTIN_DAEMON_POLICY;
  const parsed = parsePolicyText(text, file, PolicyFile);
  refuseUnaskable(parsed, [], text, file);
  for (const [name, rules] of Object.entries(parsed.profiles ?? {})) refuseUnaskable(rules, ["profiles", name], text, file);
  return { file: parsed, source: path.resolve(file), digest: sha256Hex(text) };
}

/**
 * Only a write or a command can wait for a person (a prepared, bound action).
 * A read or a test preset has no such action, so `ask` there is refused when
 * the file is loaded instead of being turned into allow or deny at run time.
 */
export function refuseUnaskable(rules: PolicyRules, at: readonly string[], text: string, label: string): void {
  for (const cls of ["read", "test"] as const) {
    if (rules.tools?.[cls] !== "ask") continue;
    const keys = [...at, "tools", cls];
    const line = lineOfPath(text, keys);
    throw new MiniAgentError(
      "policy_invalid",
      `${label}${line === null ? "" : `:${line}`}: ${keys.join(".")}: "ask" is only possible for write and command; use "allow" or "deny"`,
    );
  }
}
