import { MiniAgentError } from "../errors.js";

/**
 * The names an install sandbox may reach through the egress proxy (issue 25).
 * A name is compared as text, never resolved: the proxy decides on the name
 * the client asked for before any lookup or connection is made, so a refused
 * name never leaves this machine, not even as a DNS query.
 */
export interface AllowedHost {
  /** lower case; an IPv6 literal without brackets */
  host: string;
  port: number;
}

const NAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;
const V6 = /^[0-9a-f:.]+$/;

function badHost(raw: string, why: string): MiniAgentError {
  return new MiniAgentError(
    "invalid_request",
    `--allow-host ${JSON.stringify(raw)}: ${why}; use HOST or HOST:PORT, e.g. registry.example.org or 127.0.0.1:4873`,
    {
      details: { allow_host: raw },
    },
  );
}

/** `HOST[:PORT]` as a user gives it (`--allow-host`); port 443 when absent. */
export function parseAllowHost(raw: string): AllowedHost {
  const s = raw.trim().toLowerCase();
  let host = s;
  let port = "443";
  const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(s);
  if (v6) {
    host = v6[1]!;
    port = v6[2] ?? port;
    if (!V6.test(host)) throw badHost(raw, "not an IPv6 address");
  } else {
    const i = s.lastIndexOf(":");
    if (i !== -1) {
      host = s.slice(0, i);
      port = s.slice(i + 1);
    }
    if (!NAME.test(host)) throw badHost(raw, "not a host name");
  }
  const n = Number(port);
  if (!/^\d{1,5}$/.test(port) || n < 1 || n > 65535) throw badHost(raw, "the port is not 1-65535");
  return { host, port: n };
}

/** The host and port a registry URL names (http: 80, https: 443 when absent); null for any other scheme. */
export function hostOfUrl(url: string): AllowedHost | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return null;
  const host = u.hostname.replace(/^\[|\]$/g, "").toLowerCase();
  return { host, port: u.port ? Number(u.port) : u.protocol === "https:" ? 443 : 80 };
}

export function formatHost(h: AllowedHost): string {
  return `${h.host.includes(":") ? `[${h.host}]` : h.host}:${h.port}`;
}

/** Exact name and port; no wildcard, no suffix match: a listed name never lets a look-alike through. */
export function isAllowed(list: readonly AllowedHost[], host: string, port: number): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  return list.some((a) => a.host === h && a.port === port);
}
