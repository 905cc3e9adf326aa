import { isOpaqueSecret, KNOWN_SECRET_MIN_CHARS, NOT_SECRET_KEY, OPAQUE_CANDIDATE, REDACTED, SECRET_KEY, VALUE_SHAPES, VERBATIM_KEY } from "./rules.js";

/**
 * The one redaction function set. Every sink calls these: the pino logger,
 * the ledger (events, messages, run reasons and state), the trace export,
 * live run records, provider error messages, the messages sent to a model and
 * tool observations. None of them throws; each returns a redacted copy.
 *
 *   redactText(text, known?)    secret-shaped text and the live credentials in one string
 *   redactDeep(value, known?)   the same for every string inside a JSON-like value, plus
 *                               values under secret-looking field names; cycles and depth bounded
 *
 * `known` is the exact credential values the daemon holds (the model's API key
 * once read, the TCP token): they are replaced wherever they appear, whatever
 * their shape.
 */
export type KnownSecrets = readonly string[];

export function redactText(text: string, known: KnownSecrets = []): string {
  return redactString(text, known, false);
}

function redactString(text: string, known: KnownSecrets, verbatim: boolean): string {
  let out = text;
  // longest first: a credential that contains another is replaced whole
  for (const secret of [...known].sort((a, b) => b.length - a.length))
    if (secret.length >= KNOWN_SECRET_MIN_CHARS && out.includes(secret)) out = out.split(secret).join(REDACTED);
  if (verbatim) return out;
  for (const shape of VALUE_SHAPES) {
    shape.pattern.lastIndex = 0;
    out = shape.replace ? out.replace(shape.pattern, shape.replace as (m: string, ...g: string[]) => string) : out.replace(shape.pattern, REDACTED);
  }
  return out.replace(OPAQUE_CANDIDATE, (token: string, offset: number, whole: string) =>
    isOpaqueSecret(token, whole.slice(Math.max(0, offset - 100), offset)) ? REDACTED : token,
  );
}

const MAX_DEPTH = 64;

export function redactDeep(value: unknown, known: KnownSecrets = []): unknown {
  return walk(value, known, 0, new WeakSet<object>(), false);
}

function walk(value: unknown, known: KnownSecrets, depth: number, seen: WeakSet<object>, verbatim: boolean): unknown {
  if (typeof value === "string") return redactString(value, known, verbatim);
  if (value === null || typeof value !== "object") return value;
  if (depth > MAX_DEPTH || seen.has(value)) return REDACTED;
  seen.add(value);
  try {
    if (value instanceof Error) {
      const code = (value as { code?: unknown }).code;
      return {
        type: value.name,
        message: redactString(value.message, known, false),
        ...(code === undefined ? {} : { code }),
        ...(value.stack ? { stack: redactString(value.stack, known, false) } : {}),
      };
    }
    if (Array.isArray(value)) return value.map((v) => walk(v, known, depth + 1, seen, false));
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      out[k] =
        isSecretKey(k) && v !== null && v !== undefined && typeof v !== "boolean" && typeof v !== "number"
          ? REDACTED
          : walk(v, known, depth + 1, seen, VERBATIM_KEY.test(k));
    }
    return out;
  } finally {
    // a value seen twice but not in a cycle (the same object in two places) is walked both times
    seen.delete(value);
  }
}

export function isSecretKey(name: string): boolean {
  return SECRET_KEY.test(name) && !NOT_SECRET_KEY.test(name);
}
