import crypto from "node:crypto";
import type { IncomingMessage } from "node:http";

/**
 * Bearer-token check for the optional TCP listener. Both sides are hashed
 * first so timingSafeEqual always compares equal-length digests: neither the
 * token's content nor its length leaks through timing.
 */
export function tokenMatches(req: IncomingMessage, expected: string): boolean {
  const header = req.headers.authorization;
  if (typeof header !== "string") return false;
  const m = /^Bearer ([^\s]+)$/.exec(header);
  const given = m?.[1] ?? "";
  const a = crypto.createHash("sha256").update(given, "utf8").digest();
  const b = crypto.createHash("sha256").update(expected, "utf8").digest();
  return crypto.timingSafeEqual(a, b) && m !== null;
}
