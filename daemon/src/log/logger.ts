import fs from "node:fs";
import path from "node:path";
import { pino, type DestinationStream, type Logger } from "pino";
import type { LogLevel } from "../config/daemon-config.js";
import { redactDeep, redactText, REDACTED } from "../redact/index.js";

export type { Logger };

/**
 * pino's `redact` removes the usual credential paths cheaply and by name; the
 * `formatters.log` hook and the message hook then apply the daemon's one rule
 * set (redact/) to every field and message, at any depth: an error's details
 * or a provider's response can nest a secret anywhere, and a message is where a
 * careless interpolation lands.
 */
const REDACT_PATHS = [
  "authorization",
  "api_key",
  "apiKey",
  "token",
  "password",
  "secret",
  "credentials",
  "headers.authorization",
  "req.headers.authorization",
  "*.authorization",
  "*.api_key",
  "*.apiKey",
  "*.token",
  "*.password",
  "*.secret",
  "*.headers.authorization",
];

export interface LoggerOptions {
  level: LogLevel;
  /** where lines go; default: <stateDir>/logs/daemon.log (mode 0600) */
  destination: DestinationStream;
  /** secrets known to the process (e.g. the TCP token) that must never be written even inside free text */
  knownSecrets?: () => readonly string[];
}

export function createLogger(opts: LoggerOptions): Logger {
  const known = opts.knownSecrets ?? (() => []);
  return pino(
    {
      level: opts.level,
      base: { pid: process.pid },
      redact: { paths: REDACT_PATHS, censor: REDACTED },
      serializers: { err: (e: unknown) => redactDeep(e, known()) },
      formatters: {
        log: (obj) => redactDeep(obj, known()) as Record<string, unknown>,
      },
      hooks: {
        logMethod(args, method) {
          const scrubbed = args.map((a) => (typeof a === "string" ? redactText(a, known()) : a)) as Parameters<typeof method>;
          method.apply(this, scrubbed);
        },
      },
    },
    opts.destination,
  );
}

/** The daemon's log file inside the state dir: one JSON object per line, readable only by the owner. */
export function openLogFile(logsDir: string, name = "daemon.log"): DestinationStream {
  fs.mkdirSync(logsDir, { recursive: true, mode: 0o700 });
  fs.chmodSync(logsDir, 0o700);
  const file = path.join(logsDir, name);
  const fd = fs.openSync(file, "a", 0o600);
  fs.fchmodSync(fd, 0o600);
  return pino.destination({ fd, sync: true });
}

/** child logger per run, as STYLE asks: every line of a run carries its id */
export function runLogger(log: Logger, runId: string): Logger {
  return log.child({ runId });
}
