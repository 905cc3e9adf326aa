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
