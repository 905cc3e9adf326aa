/**
 * Redaction: one rule set (rules.ts), one set of functions (redact.ts), used by
 * every sink that stores, shows or sends text. It imports nothing of ours, so
 * any folder (log/, store/, trace/, live-record/, models/, runtime/) may use it
 * without a cycle; that is why it is a folder of its own and not part of one sink.
 */
export { redactDeep, redactText, isSecretKey, type KnownSecrets } from "./redact.js";
export { REDACTED, KNOWN_SECRET_MIN_CHARS, VALUE_SHAPES, type ValueShape } from "./rules.js";
export { createSecretSet, type SecretSet } from "./secret-set.js";
