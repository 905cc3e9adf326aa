import path from "node:path";
import { z } from "zod";
import { describeZodError } from "../contracts/common.js";
import { Runtime } from "../contracts/sandbox.js";
import { parseCli } from "./cli-args.js";
import { parseByteSize, parseFileCount } from "../contracts/copy-limits.js";
import { COPY_LIMITS, type CopyLimits } from "../workspace/copy-limits.js";
import { resolveStateDir, statePath } from "./state-dir.js";

/** Every default of the daemon process, in one place (documented in `--help`). */
export const DAEMON_DEFAULTS = {
  logLevel: "info" as LogLevel,
  runtime: "runc" as Runtime,
  /** request bodies above this are refused with 413; a task spec and some paths fit in far less */
  maxBodyBytes: 1024 * 1024,
  /** upper bound for one events long-poll */
  maxWaitMs: 30_000,
  /** how long SIGTERM waits for runService.shutdown() before exiting anyway */
  shutdownTimeoutMs: 60_000,
  /** a token shorter than this is refused: it would be guessable */
  minTokenLength: 16,
  /**
   * a task's control folder is copied into the state dir at create; above these
   * it is refused with 400 before anything is copied (issue 10 item 5)
   */
  controlMaxBytes: 64 * 1024 * 1024,
  controlMaxFiles: 10_000,
  /**
   * ready, never-used sandboxes kept per image family and configuration for the
   * Verifier's fresh runs (sandbox/sandbox-pool.ts); 0 disables the pool
   */
  sandboxPool: 1,
  /** the largest --sandbox-pool: each member is an idle container on a shared engine */
  sandboxPoolMax: 8,
} as const;

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface TcpListen {
  host: string;
  port: number;
}

export interface DaemonConfig {
  stateDir: string;
  socketPath: string;
  tcp: TcpListen | null;
  tokenFile: string | null;
  forceNonLoopback: boolean;
  logLevel: LogLevel;
  runtime: Runtime;
  maxBodyBytes: number;
  maxWaitMs: number;
  shutdownTimeoutMs: number;
  controlLimits: { maxBytes: number; maxFiles: number };
  /** `--max-workspace-bytes/-files`: the copy limits of a run that names none (workspace/copy-limits.ts) */
  copyLimits: CopyLimits;
  /** `--sandbox-pool N`: ready sandboxes per family and configuration; 0: none */
  sandboxPool: number;
  /** `--policy FILE`, else <state-dir>/policy.json; only the default may be missing (then the built-in policy applies) */
  policy: { file: string; named: boolean };
}

export const DAEMON_USAGE = `usage: mini-agent-daemon [options]

Runs in the foreground; the one trusted process of mini-agent (ledger,
credentials, sandbox, Verifier). Clients talk to it over a Unix socket.

options:
  --state-dir DIR        state directory (mode 0700). Default: $MINI_AGENT_STATE_DIR,
                         else $XDG_STATE_HOME/mini-agent, else ~/.local/state/mini-agent
  --socket PATH          Unix socket (mode 0600). Default: <state-dir>/daemon.sock
  --tcp HOST:PORT        also listen on loopback TCP (needs --token-file); port 0 picks one
  --token-file FILE      bearer token for TCP clients (file mode 0600, >= 16 characters)
  --force-non-loopback   allow --tcp on a non-loopback address (not recommended)
  --log-level LEVEL      ${LOG_LEVELS.join("|")} (default ${DAEMON_DEFAULTS.logLevel}); logs go to <state-dir>/logs/
  --runtime NAME         OCI runtime for sandboxes: runc|runsc (default ${DAEMON_DEFAULTS.runtime})
  --control-max-bytes N  largest task control folder a run may bring, in bytes (default ${DAEMON_DEFAULTS.controlMaxBytes})
  --control-max-files N  most files and folders in it (default ${DAEMON_DEFAULTS.controlMaxFiles})
  --max-workspace-bytes SIZE  largest workspace, fixture or case repo/ a run copies, in bytes or with
                         K/M/G (default ${COPY_LIMITS.maxBytes}: the sandbox's workspace less room for test writes);
                         a run's own --max-workspace-bytes overrides it
  --max-workspace-files N  most regular files in it (default ${COPY_LIMITS.maxFiles})
  --sandbox-pool N       ready, never-used sandboxes kept per image family and configuration for
                         fresh runs (0-${DAEMON_DEFAULTS.sandboxPoolMax}, default ${DAEMON_DEFAULTS.sandboxPool}; 0 disables); removed at shutdown
  --policy FILE          the approval policy (JSON). Default: <state-dir>/policy.json, and when that
                         does not exist the built-in one. A broken file stops the start-up.
  --help                 show this help

The live model key comes from MINI_AGENT_API_KEY (or OPENAI_API_KEY) in this
process's environment, or from <state-dir>/credentials.json {"api_key": "..."} (mode 0600).

exit codes: 0 clean shutdown, 1 start-up failure, 64 usage error,
            75 another daemon already runs on this state dir`;

export type ParsedDaemonArgs = { kind: "run"; config: DaemonConfig } | { kind: "help" } | { kind: "usage_error"; message: string };

const HostPort = z
  .string()
  .regex(/^(\[[0-9a-fA-F:]+\]|[^:\s]+):(\d{1,5})$/, "expected HOST:PORT, e.g. 127.0.0.1:7878")
  .transform((s, ctx) => {
    const idx = s.lastIndexOf(":");
    const host = s.slice(0, idx).replace(/^\[|\]$/g, "");
    const port = Number(s.slice(idx + 1));
    if (port > 65535) {
      ctx.addIssue({ code: "custom", message: "port must be 0-65535" });
      return z.NEVER;
    }
    return { host, port };
  });

/** a flag's digits, nothing else: "1e3", "0x10" and " 5" are usage errors */
const PositiveInt = z
  .string()
  .regex(/^[1-9][0-9]{0,15}$/)
  .transform(Number)
  .pipe(z.int().min(1).max(Number.MAX_SAFE_INTEGER));

/** Parses argv strictly: unknown flags and stray words are usage errors, never ignored. */
export function parseDaemonArgs(argv: string[], env: NodeJS.ProcessEnv, cwd: string): ParsedDaemonArgs {
  const parsed = parseCli(
    argv,
    {
      "state-dir": { type: "string" },
      socket: { type: "string" },
      tcp: { type: "string" },
      "token-file": { type: "string" },
      "force-non-loopback": { type: "boolean" },
      "log-level": { type: "string" },
      runtime: { type: "string" },
      "control-max-bytes": { type: "string" },
      "control-max-files": { type: "string" },
      "max-workspace-bytes": { type: "string" },
      "max-workspace-files": { type: "string" },
      policy: { type: "string" },
      "sandbox-pool": { type: "string" },
      help: { type: "boolean" },
    },
    false,
  );
  if (!parsed.ok) return { kind: "usage_error", message: parsed.message };
  const values: Record<string, string | boolean | undefined> = parsed.values;
  if (values.help) return { kind: "help" };

  const logLevel = z.enum(LOG_LEVELS).safeParse(values["log-level"] ?? DAEMON_DEFAULTS.logLevel);
  if (!logLevel.success) return { kind: "usage_error", message: `--log-level: use one of ${LOG_LEVELS.join(", ")}` };
  const runtime = Runtime.safeParse(values.runtime ?? DAEMON_DEFAULTS.runtime);
  if (!runtime.success) return { kind: "usage_error", message: "--runtime: use runc or runsc" };
  const maxBytes = PositiveInt.safeParse(values["control-max-bytes"] ?? String(DAEMON_DEFAULTS.controlMaxBytes));
  if (!maxBytes.success) return { kind: "usage_error", message: "--control-max-bytes: a whole number of bytes, at least 1" };
  const maxFiles = PositiveInt.safeParse(values["control-max-files"] ?? String(DAEMON_DEFAULTS.controlMaxFiles));
  if (!maxFiles.success) return { kind: "usage_error", message: "--control-max-files: a whole number, at least 1" };
  const wsBytes = typeof values["max-workspace-bytes"] === "string" ? parseByteSize(values["max-workspace-bytes"]) : COPY_LIMITS.maxBytes;
  if (wsBytes === null) return { kind: "usage_error", message: "--max-workspace-bytes: a size in bytes, or with K, M or G (binary), at least 1" };
  const wsFiles = typeof values["max-workspace-files"] === "string" ? parseFileCount(values["max-workspace-files"]) : COPY_LIMITS.maxFiles;
  if (wsFiles === null) return { kind: "usage_error", message: "--max-workspace-files: a whole number, at least 1" };

  const poolText = values["sandbox-pool"] ?? String(DAEMON_DEFAULTS.sandboxPool);
  const pool = typeof poolText === "string" && /^(0|[1-9][0-9]?)$/.test(poolText) ? Number(poolText) : -1;
  if (pool < 0 || pool > DAEMON_DEFAULTS.sandboxPoolMax) {
    return { kind: "usage_error", message: `--sandbox-pool: a whole number from 0 (no pool) to ${DAEMON_DEFAULTS.sandboxPoolMax}` };
  }

  let tcp: TcpListen | null = null;
  if (typeof values.tcp === "string") {
    const hp = HostPort.safeParse(values.tcp);
    if (!hp.success) return { kind: "usage_error", message: `--tcp: ${describeZodError(hp.error)}` };
    tcp = hp.data;
  }
  const tokenFile = typeof values["token-file"] === "string" ? path.resolve(cwd, values["token-file"]) : null;
  if (tcp && !tokenFile) return { kind: "usage_error", message: "--tcp needs --token-file FILE (TCP clients must send a bearer token)" };
  if (!tcp && tokenFile) return { kind: "usage_error", message: "--token-file is only used with --tcp HOST:PORT" };
  if (!tcp && values["force-non-loopback"]) return { kind: "usage_error", message: "--force-non-loopback is only used with --tcp" };

  const stateDir = resolveStateDir(env, typeof values["state-dir"] === "string" ? path.resolve(cwd, values["state-dir"]) : undefined);
  const socketPath = typeof values.socket === "string" ? path.resolve(cwd, values.socket) : statePath(stateDir, "socket");
  return {
    kind: "run",
    config: {
      stateDir,
      socketPath,
      tcp,
      tokenFile,
      forceNonLoopback: values["force-non-loopback"] === true,
      logLevel: logLevel.data,
      runtime: runtime.data,
      maxBodyBytes: DAEMON_DEFAULTS.maxBodyBytes,
      maxWaitMs: DAEMON_DEFAULTS.maxWaitMs,
      shutdownTimeoutMs: DAEMON_DEFAULTS.shutdownTimeoutMs,
      controlLimits: { maxBytes: maxBytes.data, maxFiles: maxFiles.data },
      copyLimits: { maxBytes: wsBytes, maxFiles: wsFiles },
      sandboxPool: pool,
      policy:
        typeof values.policy === "string" ? { file: path.resolve(cwd, values.policy), named: true } : { file: statePath(stateDir, "policy"), named: false },
    },
  };
}

/** 127.0.0.0/8, ::1 and `localhost` are loopback; anything else is reachable from elsewhere. */
export function isLoopbackHost(host: string): boolean {
  if (host === "localhost" || host === "::1") return true;
  const m = /^127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  // biome-ignore lint/complexity/useOptionalChain: `m?.…` would make the answer boolean | undefined
  return m !== null && m.slice(1).every((o) => Number(o) <= 255);
}
