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
  /**
   * The Verifier's secret scan of a run's diff uses this shape too (verifier/secret-scan.ts).
   * Only shapes that are a credential wherever they appear in source code: a header or
   * `password=` shape also matches `Authorization: \`Bearer ${token}\`` and test fixtures.
   */
  inDiff?: true;
}

const keepLabel = (_m: string, label: string, sep: string): string => `${label}${sep}${REDACTED}`;

/**
 * Secret-shaped text, in the order applied (the widest first: a PEM block or
 * an Authorization header may contain shapes further down). Each pattern is
 * global; each shape has an entry in redact.test.ts.
 */
export const VALUE_SHAPES: readonly ValueShape[] = [
  // a private key block, or what is left of one when the text was cut
  {
    name: "pem_private_key",
    inDiff: true,
    pattern: /-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|$)/g,
  },
  // `https://user:password@host` (.git-credentials, a database URL, a proxy): the password goes, the user and host stay
  {
    name: "url_credentials",
    pattern: /\b([a-z][a-z0-9+.-]{1,20}:\/\/[^\s:@/"'`]*:)([^\s@/"'`]{3,})(@[\w.-])/gi,
    replace: (_m: string, head: string, _pw: string, tail: string) => `${head}${REDACTED}${tail}`,
  },
  // a .pgpass line `host:port:database:user:password`, also where a line is quoted or prefixed (`# ` in TAP output)
  {
    name: "pgpass_line",
    pattern: /(?<![\w:.*-])([A-Za-z0-9*][^\s:#"']*:(?:\d{1,5}|\*):[^\s:"']+:[^\s:"']+:)([^\s"'\\]+)/g,
    replace: (_m: string, head: string) => `${head}${REDACTED}`,
  },
  // .netrc: `machine h login u password p` (on one line or several); `login u password p`, and a line
  // that is only `password p`, as a search snippet shows the third line of a netrc entry
  {
    name: "netrc_password",
    pattern: /(\b(?:machine\s+\S+\s+(?:(?:login|account|port)\s+\S+\s+)*|login\s+\S+\s+)password\s+|^[^\w\n]*password[ \t]+(?=\S+[ \t]*$))(\S+)/gm,
    replace: (_m: string, head: string) => `${head}${REDACTED}`,
  },
  // .htpasswd and shadow-style hashes: bcrypt `$2y$10$...`, `$apr1$salt$hash`, sha-crypt `$5$`/`$6$`, `{SHA}base64`
  {
    name: "password_hash",
    pattern:
      /\$2[abxy]?\$\d\d\$[./A-Za-z0-9]{53}|\$(?:apr1|1|5|6)\$(?:rounds=\d+\$)?[./A-Za-z0-9]{1,16}\$[./A-Za-z0-9]{20,}|\{SSHA?\}[A-Za-z0-9+/]{20,}={0,2}/g,
  },
  // <password>x</password> in Maven's settings.xml and other XML configuration
  {
    name: "xml_secret",
    pattern: /(<(password|passphrase|privateKey|token|secret|apiKey|accessKey|secretKey)>)(?!\$\{)([^<]{3,})(<\/\2>)/gi,
    replace: (_m: string, open: string, _tag: string, _v: string, close: string) => `${open}${REDACTED}${close}`,
  },
  // prefixed tokens of tools whose credential files are forbidden too: Vault (hvs./hvb./hvr.), GitLab, npm, PyPI, Docker Hub
  {
    name: "prefixed_token",
    inDiff: true,
    pattern: /\b(?:hv[sbr]\.[A-Za-z0-9_-]{20,}|glpat-[A-Za-z0-9_-]{20,}|npm_[A-Za-z0-9]{36}|pypi-[A-Za-z0-9_-]{50,}|dckr_pat_[A-Za-z0-9_-]{20,})/g,
  },
  // a docker config.json `"auth": "dXNlcjpwYXNz"`, a kubeconfig `client-key-data: LS0t...`, `identitytoken`
  {
    name: "auth_blob",
    pattern: /(["']?(?:auth|identitytoken|registrytoken|client-key-data)["']?)(\s*:\s*)(["']?)[A-Za-z0-9+/=._-]{8,}\3/gi,
    // a word (`"auth": "required"`) stays: docker's value is base64 of user:password, a key's is base64 too
    replace: (m: string, label: string, sep: string, q: string) =>
      /[0-9=+/]/.test(m.slice(label.length + sep.length)) ? `${label}${sep}${q}${REDACTED}${q}` : m,
  },
  // `Authorization: Bearer x`, `authorization=Basic x`, `Proxy-Authorization: x`: the scheme and the credential go
  {
    name: "authorization_header",
    pattern: /\b((?:proxy-)?authorization)(\s*[:=]\s*)(?:(?:bearer|basic|token|digest|negotiate)\s+)?[^\s"',;]+/gi,
    replace: keepLabel,
  },
  // from 6 characters on: the old ledger rules kept anything under 16 (issue 10 item 2); prose
  // such as "the bearer of" stays
  { name: "bearer_token", pattern: /\b(bearer)(\s+)[A-Za-z0-9._~+/=-]{6,}/gi, replace: keepLabel },
  // npm's `//registry/:_authToken=...`, `_auth=`, `_password=`; yarn's `npmAuthToken: ...`, `npmAuthIdent: ...`
  {
    name: "npm_auth",
    pattern: /(_authToken|_auth|_password|npmAuthToken|npmAuthIdent|npmPassword)(\s*[=:]\s*)["']?[^\s"']+["']?/g,
    replace: keepLabel,
  },
  // OpenAI-style keys, including the masked echo some providers send back (`sk-ab***yz`)
  { name: "sk_key", inDiff: true, pattern: /\b(?:sk|rk|pk)-[A-Za-z0-9_*.-]{8,}/g },
  { name: "stripe_key", inDiff: true, pattern: /\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{8,}/g },
  { name: "aws_access_key_id", inDiff: true, pattern: /\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b/g },
  { name: "github_token", inDiff: true, pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})/g },
  { name: "google_api_key", inDiff: true, pattern: /\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/g },
  { name: "slack_token", inDiff: true, pattern: /\bxox[abposr]-[A-Za-z0-9-]{8,}/g },
  { name: "jwt", inDiff: true, pattern: /\beyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}/g },
  // `password=x1`, `client_secret = "x"`, `token: "x"`; the name must END in the keyword, so
  // `max_tokens=5` stays. A quoted value always goes; an unquoted one only when it has a digit:
  // `token: string` is a type and `fooToken = barToken;` is code the model may have to patch
  {
    name: "secret_assignment",
    pattern:
      /\b([A-Za-z0-9_.-]{0,64}(?:password|passwd|secret|token|api[_-]?key|apikey|access[_-]?key|secret[_-]?key|private[_-]?key))(\s*=\s*|["']?\s*:\s*)("[^"\n]{3,}"|'[^'\n]{3,}'|[^\s"'`,;(){}[\]<>]{3,}(?![\w(]|\.[A-Za-z_$]))/gi,
    replace: (m: string, label: string, sep: string, value: string) => (!/^["']/.test(value) && !/\d/.test(value) ? m : `${label}${sep}${REDACTED}`),
  },
  // `STRIPE_KEY=...` in an env file, `apiKey: "..."` in JSON or YAML, `token := "..."` in Go: a
  // random-looking value under a credential's name (isAssignedSecret). Wider names than the
  // shape above (`*_KEY`), narrower values (random-looking only), so ordinary code stays
  {
    name: "assigned_secret",
    inDiff: true,
    // a quoted value, or an unquoted one of token characters that ends where a value ends
    pattern: /(?<![\w$.-])(["']?)([A-Za-z_][\w.-]{0,63})\1(\s*(?::=|=>|[:=])\s*)(?:(["'`])([^\s"'`]{16,512})\4|([A-Za-z0-9+/_.~=-]{16,512})(?![^\s,;)}\]]))/g,
    replace: (m: string, q: string, name: string, sep: string, vq: string | undefined, quoted: string | undefined, bare: string | undefined) => {
      const value = quoted ?? bare ?? "";
      return isAssignedSecret(name, value) ? `${q}${name}${q}${sep}${vq ?? ""}${REDACTED}${vq ?? ""}` : m;
    },
  },
];

/**
 * Names a credential is stored under: `*_KEY` in upper case (env style), and in any case
 * a name ending in api_key, access_key, secret_key, private_key, auth_key, secret, token,
 * password, passwd or pwd. `primaryKey`, `sortKey`, `cacheKey` are not.
 */
const SECRET_NAME_UPPER_KEY = /(?:^|_)KEY$/;
const SECRET_NAME = /(?:api|access|secret|private|auth|client|signing|encryption)[_-]?key$|secret$|token$|password$|passwd$|pwd$/i;

/**
 * Per-character Shannon entropy a value under a credential's name must reach. 3.0
 * bits/char: of 20,000 random 16-character [A-Za-z0-9] strings, 99.9 % are above 3.2, and
 * of random 32-character hex 99.9 % are above 3.1; the name is already half the evidence,
 * so the bar is lower than OPAQUE_MIN_BITS_PER_CHAR (a token with no name at all).
 * Entropy alone does not separate `changeme123456789` (3.97) from a key, so the value's
 * shape must also look random: hex of 32+ characters, or upper AND lower case AND digits
 * (20+ characters: upper and lower case), and not camel-case words.
 */
export const ASSIGNED_MIN_BITS_PER_CHAR = 3.0;

/** A random-looking value (see ASSIGNED_MIN_BITS_PER_CHAR) assigned to a credential's name. */
export function isAssignedSecret(name: string, value: string): boolean {
  const bare = name.replace(/^.*[.]/, "");
  if (!SECRET_NAME_UPPER_KEY.test(bare) && !SECRET_NAME.test(bare)) return false;
  if (value.length < 16 || value.includes(REDACTED)) return false;
  // `os.environ.get`, `process.env.API_TOKEN`, `${{ secrets.X }}`, a path: a reference, not a value
  if (/^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$/.test(value) || value.startsWith("$")) return false;
  const hex = /^[0-9a-fA-F]+$/.test(value);
  const mixed = /[A-Z]/.test(value) && /[a-z]/.test(value) && (/[0-9]/.test(value) || value.length >= 20);
  if (hex ? value.length < 32 || !/[a-fA-F]/.test(value) || !/[0-9]/.test(value) : !mixed) return false;
  if (isIdentifier(value) || isCamelWords(value)) return false;
  return shannonBitsPerChar(value) >= ASSIGNED_MIN_BITS_PER_CHAR;
}

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

/**
 * `accessTokenV2FromCache`, `DefaultSigningKey2024`: camel-case words. Split into humps,
 * most letter humps of a name are a word of 3+ letters; those of a random token rarely are.
 */
function isCamelWords(value: string): boolean {
  const humps = (value.match(/[A-Z]?[a-z]+|[A-Z]+(?![a-z])/g) ?? []).filter((h) => h.length > 0);
  if (humps.length === 0) return false;
  const letters = humps.reduce((n, h) => n + h.length, 0);
  // a word has a vowel and no run of 4 consonants: `Smdqasfral` in a random token is not one
  const word = (h: string) => /^[A-Z]?[a-z]{2,}$/.test(h) && /[aeiouy]/i.test(h) && !/[^aeiouy]{4,}/i.test(h);
  const inWords = humps.filter(word).reduce((n, h) => n + h.length, 0);
  return inWords / letters >= 0.75 && letters / value.replace(/[^A-Za-z0-9]/g, "").length >= 0.75;
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
