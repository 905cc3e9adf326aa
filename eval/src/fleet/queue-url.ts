import { z } from "zod";
import { MiniAgentError } from "../../../daemon/src/errors.js";

/**
 * `--queue redis://[:PASSWORD@]HOST:PORT/DB` (or `rediss://` for TLS): where
 * an eval fleet's jobs live (docs/scale-out.md). Parsed once, here, by the
 * client and the worker alike. The password is a credential of the queue: it
 * is kept apart from everything printable, and every message about a URL is
 * built from `redactQueueUrl`, never from the text the user gave.
 */
export interface QueueTarget {
  tls: boolean;
  host: string;
  port: number;
  db: number;
  /** null: Redis without AUTH (allowed, but redis-ensure.sh always sets one) */
  password: string | null;
  /** the URL with the password replaced by `***`: the only form that is ever printed or logged */
  display: string;
}

const Parts = z.strictObject({
  protocol: z.enum(["redis:", "rediss:"], { error: "the scheme must be redis:// or rediss:// (TLS)" }),
  username: z.literal("", { error: "a user name is not supported: use redis://:PASSWORD@HOST:PORT/DB" }),
  hostname: z.string().min(1, { error: "the host is missing" }),
  port: z.string().regex(/^\d+$/, { error: "the port is required (redis://HOST:PORT/DB)" }),
  pathname: z.string().regex(/^\/\d{1,2}$/, { error: "the database is required, a number: redis://HOST:PORT/DB" }),
  search: z.literal("", { error: "query options are not supported" }),
  hash: z.literal("", { error: "a #fragment is not supported" }),
});

/** The given text with anything between `//:` or `//user:` and `@` replaced: used before the text is even parsed. */
export function redactQueueUrl(text: string): string {
  return text.replace(/^([a-z][a-z0-9+.-]*:\/\/)([^@/]*)@/i, (_m, scheme: string, auth: string) => `${scheme}${auth === "" ? "" : "***"}@`);
}

export function parseQueueUrl(text: string): QueueTarget {
  const shown = redactQueueUrl(text);
  const bad = (why: string) => new MiniAgentError("queue_url_invalid", `--queue ${shown}: ${why}`);
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw bad("not a URL; use redis://[:PASSWORD@]HOST:PORT/DB or rediss://...");
  }
  const parsed = Parts.safeParse({
    protocol: u.protocol,
    username: u.username,
    hostname: u.hostname,
    port: u.port,
    pathname: u.pathname,
    search: u.search,
    hash: u.hash,
  });
  if (!parsed.success) throw bad(parsed.error.issues.map((i) => i.message).join("; "));
  const port = Number(u.port);
  const db = Number(u.pathname.slice(1));
  if (port < 1 || port > 65535) throw bad(`the port must be 1..65535, not ${port}`);
  if (db > 15) throw bad(`the database must be 0..15 (Redis' default count), not ${db}`);
  let password: string | null = null;
  try {
    password = u.password === "" ? null : decodeURIComponent(u.password);
  } catch {
    throw bad("the password is not valid percent-encoding");
  }
  const tls = u.protocol === "rediss:";
  // IPv6 hosts come bracketed from URL; ioredis wants them bare
  const host = u.hostname.replace(/^\[(.*)\]$/, "$1");
  return { tls, host, port, db, password, display: `${tls ? "rediss" : "redis"}://${password === null ? "" : "***@"}${u.hostname}:${port}/${db}` };
}

/** ioredis connection options (BullMQ passes them on); maxRetriesPerRequest null is what BullMQ's workers require. */
export function connectionOptions(t: QueueTarget): {
  host: string;
  port: number;
  db: number;
  password?: string;
  tls?: Record<string, never>;
  maxRetriesPerRequest: null;
} {
  return {
    host: t.host,
    port: t.port,
    db: t.db,
    ...(t.password !== null && { password: t.password }),
    ...(t.tls && { tls: {} }),
    maxRetriesPerRequest: null,
  };
}
