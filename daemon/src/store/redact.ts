/**
 * Credentials never reach the ledger or the trace. Any field whose NAME looks
 * like a secret is replaced, and any string VALUE shaped like a bearer token or
 * an API key is too: a model could echo a key back inside free text.
 */
const SECRET_KEY = /(api[_-]?key|authorization|token|secret|password|passwd|credential|cookie|private[_-]?key)/i;
const SECRET_VALUE = /\b(sk-[A-Za-z0-9_-]{16,}|Bearer\s+[A-Za-z0-9._~+/=-]{16,})/g;
export const REDACTED = "[redacted]";

export function redact(value: unknown, depth = 0): unknown {
  if (depth > 32) return REDACTED;
  if (typeof value === "string") return value.replace(SECRET_VALUE, REDACTED);
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      // token counters are usage figures, not secrets
      out[k] = SECRET_KEY.test(k) && !/_tokens$|^tokens$/.test(k) ? REDACTED : redact(v, depth + 1);
    }
    return out;
  }
  return value;
}

/** Secret-shaped text inside a string (a provider echoing a key in an error, a model quoting one). */
export function redactText(text: string): string {
  return text.replace(SECRET_VALUE, REDACTED);
}

/**
 * Value-only redaction for records whose field names are ours (messages): the
 * names are kept, secret-shaped strings anywhere inside are replaced.
 */
export function redactValues(value: unknown, depth = 0): unknown {
  if (depth > 64) return REDACTED;
  if (typeof value === "string") return redactText(value);
  if (Array.isArray(value)) return value.map((v) => redactValues(v, depth + 1));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, redactValues(v, depth + 1)]));
  }
  return value;
}
