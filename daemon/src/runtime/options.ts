import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { DAEMON_DEFAULTS } from "../config/daemon-config.js";
import { MiniAgentError } from "../errors.js";
import type { DaemonPolicy } from "../policy/daemon-policy.js";
import type { Ledger } from "../store/ledger.js";
import { verify } from "../verifier/verify.js";
import type { CopyLimits } from "../workspace/copy-limits.js";
import type { ControlLimits } from "./control-dir.js";
import type { Clock, CrashHook, ExecutorFactory, ModelFactory, RuntimeLogger, ToolPort, Verifier } from "./ports.js";
import type { ViewBuilder } from "./view-input.js";

export interface RunServiceOptions {
  stateDir: string;
  executorFactory: ExecutorFactory;
  modelFactory?: ModelFactory;
  logger?: RuntimeLogger;
  clock?: Clock;
  ledger?: Ledger;
  verifier?: Verifier;
  /** replace single tool functions (fault injection); the rest stay real */
  tools?: Partial<ToolPort>;
  viewBuilder?: ViewBuilder;
  /** where the built-in fixtures live; only their replay.json is trusted on trusted_local */
  builtinFixturesDir?: string;
  /** test-only crash points; see crashHookFromEnv */
  crash?: CrashHook;
  approvalKey?: Uint8Array;
  /** how large a task's control folder may be (default: the daemon's defaults) */
  controlLimits?: ControlLimits;
  /** how large a workspace (or a fixture's repo/) a run may copy, unless the run names its own (default: COPY_LIMITS) */
  copyLimits?: CopyLimits;
  /** the live credentials the daemon holds (redact/ SecretSet.values): the ledger scrubs them from every row */
  knownSecrets?: () => readonly string[];
  /** the daemon's policy file (default: the built-in policy); each run resolves and keeps its own at creation */
  policy?: DaemonPolicy;
}

export const OPTION_NAMES = [
  "stateDir",
  "executorFactory",
  "modelFactory",
  "logger",
  "clock",
  "ledger",
  "verifier",
  "tools",
  "viewBuilder",
  "builtinFixturesDir",
  "crash",
  "approvalKey",
  "controlLimits",
  "copyLimits",
  "knownSecrets",
  "policy",
];

export const DEFAULT_CONTROL_LIMITS: ControlLimits = { maxBytes: DAEMON_DEFAULTS.controlMaxBytes, maxFiles: DAEMON_DEFAULTS.controlMaxFiles };

export function defaultFixturesDir(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  // source tree: <root>/daemon/src/runtime; build: <root>/dist/daemon/src/runtime
  const candidates = [path.resolve(here, "../../../fixtures"), path.resolve(here, "../../../../fixtures")];
  return candidates.find((c) => fs.existsSync(c)) ?? candidates[0]!;
}

/** The Verifier port's control dir is the run's: the baseline is loaded from it. */
export const defaultVerifier =
  (logger: RuntimeLogger, knownSecrets?: () => readonly string[]): Verifier =>
  (i) =>
    verify({ ...i, baseline: { runControlDir: i.controlDir }, log: logger as never, ...(knownSecrets && { knownSecrets }) });

/** Unknown options fail loudly, naming the known ones. */
export function checkOptions(options: RunServiceOptions): void {
  const unknown = Object.keys(options).filter((k) => !OPTION_NAMES.includes(k));
  if (unknown.length > 0) throw new MiniAgentError("invalid_request", `unknown RunService option(s): ${unknown.join(", ")}; known: ${OPTION_NAMES.join(", ")}`);
  if (!options.stateDir || typeof options.executorFactory !== "function") {
    throw new MiniAgentError("invalid_request", "createRunService needs stateDir and executorFactory");
  }
  const limits = options.controlLimits;
  if (limits !== undefined && !(Number.isSafeInteger(limits.maxBytes) && limits.maxBytes > 0 && Number.isSafeInteger(limits.maxFiles) && limits.maxFiles > 0)) {
    throw new MiniAgentError("invalid_request", "controlLimits needs maxBytes and maxFiles, both positive whole numbers");
  }
  const copy = options.copyLimits;
  if (copy !== undefined && !(Number.isSafeInteger(copy.maxBytes) && copy.maxBytes > 0 && Number.isSafeInteger(copy.maxFiles) && copy.maxFiles > 0)) {
    throw new MiniAgentError("invalid_request", "copyLimits needs maxBytes and maxFiles, both positive whole numbers");
  }
}
