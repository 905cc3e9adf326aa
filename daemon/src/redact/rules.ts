/**
 * THE rule set for what counts as a secret (issue 10, item 2). There used to be
 * three (log, ledger/trace, live records) and they disagreed: a `Bearer` token
 * of 8-15 characters was redacted in the log but kept in the ledger and the
 * trace. Every sink now goes through redact.ts with these rules and no other.
 */
export const REDACTED = "[redacted]";

/**
 * Field names whose value is a credential whatever it looks like. Numbers,
 * booleans and null under such a name are kept: they are counts and flags.
 */
export const SECRET_KEY = /(api[_-]?key|apikey|authorization|token|secret|password|passwd|credential|cookie|private[_-]?key|bearer)/i;

/** ...except usage counters (`prompt_tokens`, a `tokens` budget), which are figures, not secrets. */
export const NOT_SECRET_KEY = /(^|_)tokens$/i;

/**
 * Field names whose string value is kept whole: content hashes the model must
 * quote back (apply_patch's `version`), digests and our own ids. They are all
 * hex or [A-Za-z0-9_.:-] ids; the long-opaque-token rule would otherwise be the
 * one to touch them. Every other value rule still applies.
 */
export const VERBATIM_KEY = /^(version|id|call_id|tool_call_id|action_id|run_id|binding_id|[a-z_]*_(digest|hash)|digest|mac)$/;

/** A live credential shorter than this is not searched for verbatim: it would wipe ordinary words. */
export const KNOWN_SECRET_MIN_CHARS = 8;

export interface ValueShape {
  name: string;
  pattern: RegExp;
  /** what replaces a match; by default REDACTED */
  replace?: (match: string, ...groups: string[]) => string;
}

const keepLabel = (_m: string, label: string, sep: string): string => `${label}${sep}${REDACTED}`;

/**
 * Secret-shaped text, in the order applied (the widest first: a PEM block or
 * an Authorization header may contain shapes further down). Each pattern is
 * global; each shape has an entry in redact.test.ts.
 */
export const VALUE_SHAPES: readonly ValueShape[] = [
  // a private key block, or what is left of one when the text was cut
  { name: "pem_private_key", pattern: /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g },
  // `Authorization: Bearer x`, `authorization=Basic x`, `Proxy-Authorization: x`: the scheme and the credential go
  {
    name: "authorization_header",
    pattern: /\b((?:proxy-)?authorization)(\s*[:=]\s*)(?:(?:bearer|basic|token|digest|negotiate)\s+)?[^\s"',;]+/gi,
    replace: keepLabel,
  },
  // from 6 characters on: the old ledger rules kept anything under 16 (issue 10 item 2); prose
  // such as "the bearer of" stays
  { name: "bearer_token", pattern: /\b(bearer)(\s+)[A-Za-z0-9._~+/=-]{6,}/gi, replace: keepLabel },
  // npm's `//registry/:_authToken=...`, `_auth=`, `_password=`
  { name: "npm_auth", pattern: /(_authToken|_auth|_password)(\s*=\s*)[^\s"']+/g, replace: keepLabel },
  // OpenAI-style keys, including the masked echo some providers send back (`sk-ab***yz`)
  { name: "sk_key", pattern: /\b(?:sk|rk|pk)-[A-Za-z0-9_*.-]{8,}/g },
  { name: "stripe_key", pattern: /\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{8,}/g },
  { name: "aws_access_key_id", pattern: /\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b/g },
  { name: "github_token", pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})/g },
  { name: "slack_token", pattern: /\bxox[abposr]-[A-Za-z0-9-]{8,}/g },
  { name: "jwt", pattern: /\beyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}/g },
  // `password=x1`, `client_secret = "x"`, `token: "x"`; the name must END in the keyword, so
  // `max_tokens=5` stays. A quoted value always goes; an unquoted one only when it has a digit:
  // `token: string` is a type and `fooToken = barToken;` is code the model may have to patch
  {
    name: "secret_assignment",
    pattern:
      /\b([A-Za-z0-9_.-]{0,64}(?:password|passwd|secret|token|api[_-]?key|apikey|access[_-]?key))(\s*=\s*|["']?\s*:\s*)("[^"\n]{3,}"|'[^'\n]{3,}'|[^\s"'`,;(){}[\]<>]{3,}(?![\w(]|\.[A-Za-z_$]))/gi,
    replace: (m: string, label: string, sep: string, value: string) => (!/^["']/.test(value) && !/\d/.test(value) ? m : `${label}${sep}${REDACTED}`),
  },
];

/**
 * Long opaque tokens (an unprefixed API key, a base64 secret): a run of 32+
 * token characters mixing upper case, lower case and digits with high entropy.
 * What must survive: SHA-256 versions and digests (hex: never mixed case), git
 * object ids, our ids (lowercase hex), subresource-integrity hashes, paths
 * (`/` is not a token character), long identifiers in code (low entropy).
 */
export const OPAQUE_CANDIDATE = /[A-Za-z0-9_+-]{32,}={0,2}/g;
export const OPAQUE_MIN_BITS_PER_CHAR = 4.2;

/** `before` is the text just ahead of the token: a subresource-integrity hash is split by its `/`s. */
export function isOpaqueSecret(token: string, before = ""): boolean {
  if (/^[0-9a-fA-F]+$/.test(token)) return false;
  if (/^sha(1|256|384|512)-/.test(token) || /sha(1|256|384|512)-[A-Za-z0-9+/=]*\/$/.test(before)) return false;
  if (!/[A-Z]/.test(token) || !/[a-z]/.test(token) || !/[0-9]/.test(token)) return false;
  if (isIdentifier(token)) return false;
  return shannonBitsPerChar(token) >= OPAQUE_MIN_BITS_PER_CHAR;
}

/**
 * `An_accessibility_modifier_cannot_be_used_1018`, `targeting_ECMAScript_5_and_higher`: words
 * joined by `_` or `-`, most of them a plain word, an upper-case word or a number. The
 * segments of a random token almost never are.
 */
function isIdentifier(token: string): boolean {
  const parts = token.split(/[_-]+/).filter((p) => p.length > 0);
  if (parts.length < 3) return false;
  const words = parts.filter((p) => /^(?:[A-Z]?[a-z]{2,}|[A-Z]{2,}|[0-9]+)$/.test(p)).length;
  return words / parts.length >= 0.7;
}

function shannonBitsPerChar(s: string): number {
  const counts = new Map<string, number>();
  for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) {
    const p = n / s.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}
