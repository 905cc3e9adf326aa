/**
 * Provider error messages are shown to users and stored in the ledger; some
 * providers echo (part of) the key back ("Incorrect API key provided: sk-ab***yz").
 * Everything that leaves the provider module passes through here first.
 */
const KEY_LIKE = /\b(?:sk|pk|rk|key|token)[-_][A-Za-z0-9_*.\-]{3,}/gi;
/** long opaque tokens (bearer tokens, JWTs, hex keys) */
const OPAQUE = /[A-Za-z0-9_\-*.]{32,}/g;
const BEARER = /\bbearer\s+\S+/gi;

export const REDACTED = "[redacted]";

export function redactSecrets(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length >= 4) out = out.split(secret).join(REDACTED);
  }
  return out.replace(BEARER, `Bearer ${REDACTED}`).replace(KEY_LIKE, REDACTED).replace(OPAQUE, REDACTED);
}

/** Redacted and capped: a provider message is a hint, not a payload. */
export function providerMessage(text: string, secrets: readonly string[], cap = 400): string {
  const clean = redactSecrets(text.replace(/\s+/g, " ").trim(), secrets);
  return clean.length > cap ? `${clean.slice(0, cap)}…` : clean;
}
