import fs from "node:fs";
import path from "node:path";
import { pino, type DestinationStream, type Logger } from "pino";
import type { LogLevel } from "../config/daemon-config.js";

export type { Logger };

/**
 * Field names that may carry a credential. pino's `redact` covers the usual
 * places by path; `scrubDeep` below catches the same names at any depth, since
 * an error's details or a provider's response can nest them anywhere.
 */
export const SECRET_KEY_PATTERN = /(authorization|api[_-]?key|apikey|token|password|passwd|secret|credential|cookie|bearer)/i;

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

/** Values that look like keys even under an innocent field name (e.g. an error message quoting a header). */
const SECRET_VALUE_PATTERNS: RegExp[] = [/\bBearer\s+[A-Za-z0-9._~+/=-]{8,}/g, /\bsk-[A-Za-z0-9_-]{12,}/g];

export const REDACTED = "[redacted]";

export function scrubString(s: string, known: readonly string[] = []): string {
  let out = s;
  for (const secret of known) if (secret.length >= 4) out = out.split(secret).join(REDACTED);
  for (const re of SECRET_VALUE_PATTERNS) out = out.replace(re, REDACTED);
  return out;
}

/** Returns a copy with credential-looking fields and values replaced; cycles and depth are bounded. */
export function scrubDeep(value: unknown, known: readonly string[] = [], depth = 0, seen = new WeakSet<object>()): unknown {
  if (typeof value === "string") return scrubString(value, known);
  if (value === null || typeof value !== "object") return value;
  if (depth > 8 || seen.has(value)) return "[elided]";
  seen.add(value);
  if (value instanceof Error) {
    return { type: value.name, message: scrubString(value.message, known), code: (value as { code?: unknown }).code, stack: value.stack ? scrubString(value.stack, known) : undefined };
  }
  if (Array.isArray(value)) return value.map((v) => scrubDeep(v, known, depth + 1, seen));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = SECRET_KEY_PATTERN.test(k) && v !== null && v !== undefined && typeof v !== "boolean" && typeof v !== "number" ? REDACTED : scrubDeep(v, known, depth + 1, seen);
  }
  return out;
}

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
      serializers: { err: (e: unknown) => scrubDeep(e, known()) },
      formatters: {
        log: (obj) => scrubDeep(obj, known()) as Record<string, unknown>,
      },
      hooks: {
        // free-text messages are scrubbed too: a message is where a careless interpolation lands
        logMethod(args, method) {
          const scrubbed = args.map((a) => (typeof a === "string" ? scrubString(a, known()) : a)) as Parameters<typeof method>;
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
