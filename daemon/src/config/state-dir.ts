import crypto from "node:crypto";
import path from "node:path";

/**
 * Where the daemon keeps its ledger, socket, logs, credentials, image lock and
 * isolation reports. Resolved once at start-up from the environment passed in
 * (never read from process.env deep inside logic).
 *
 * Order: explicit flag, MINI_AGENT_STATE_DIR, $XDG_STATE_HOME/mini-agent, ~/.local/state/mini-agent.
 */
export function resolveStateDir(env: NodeJS.ProcessEnv, explicit?: string, home = env.HOME ?? "/root"): string {
  if (explicit) return path.resolve(explicit);
  if (env.MINI_AGENT_STATE_DIR) return path.resolve(env.MINI_AGENT_STATE_DIR);
  if (env.XDG_STATE_HOME) return path.resolve(env.XDG_STATE_HOME, "mini-agent");
  return path.resolve(home, ".local", "state", "mini-agent");
}

/** Fixed names inside the state dir: one concept, one home. */
export const STATE_FILES = {
  socket: "daemon.sock",
  lock: "daemon.lock",
  ledger: "ledger.sqlite",
  logs: "logs",
  credentials: "credentials.json",
  imageLock: "sandbox-image.lock.json",
  reports: "isolation-reports",
  controlRoot: "control",
  liveRuns: "live-runs",
  /** one `<run_id>.jsonl` per run, written as it goes (trace/trace-file.ts) */
  traces: "traces",
  /** HMAC key sealing approval records (policy/approval-key.ts) */
  approvalKey: "approval.key",
  /** the default `--policy` file; absent = the built-in policy */
  policy: "policy.json",
  /** what orchestrators save of their pauses (orchestrators/): langgraph.sqlite, agents-sdk/<run_id>.json */
  orchestrators: "orchestrators",
  /**
   * one `<key>.json` per dependency layer this daemon built (sandbox/dependency-layer.ts; the layers themselves are engine
   * volumes), `install-<lookup>.json` per installed one, and `stat-<hash>.json` per workspace folder keyed (layer-stat-store.ts)
   */
  layers: "layers",
  /** one `<key>.json` per baseline test result (verifier/baseline-tests.ts): a preset's tests on a run's baseline copy */
  baselineTests: "baseline-tests",
} as const;

export function statePath(stateDir: string, name: keyof typeof STATE_FILES): string {
  return path.join(stateDir, STATE_FILES[name]);
}

/**
 * A stable name for the daemon that owns this state dir, put on every sandbox's
 * labels so its start-up reaper finds exactly what it left behind.
 */
export function instanceIdFor(stateDir: string): string {
  return crypto.createHash("sha256").update(path.resolve(stateDir)).digest("hex").slice(0, 16);
}
