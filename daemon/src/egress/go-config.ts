import path from "node:path";
import { MiniAgentError } from "../errors.js";
import { type AllowedHost, hostOfUrl } from "./allowlist.js";
import { readSmall, stripCredentials } from "./config-read.js";

/** Go's own defaults for the two services a module download talks to. */
export const GO_DEFAULT_PROXY = "https://proxy.golang.org,direct";
export const GO_DEFAULT_SUMDB = "sum.golang.org";

/** The variables of Go's that this reads: the daemon's environment, passed in as data. */
export type GoEnv = Partial<Record<"GOPROXY" | "GOSUMDB" | "GONOSUMDB" | "GOPRIVATE" | "GOFLAGS" | "GOENV" | "XDG_CONFIG_HOME", string>>;

export interface GoProxyConfig {
  /** the GOPROXY the install uses: the user's proxies, in their order, without `direct` */
  goproxy: string;
  /** where GOPROXY came from: an environment variable, the go env file, or "default" */
  from: string;
  /** the proxies' and the checksum database's hosts: the default allowlist */
  hosts: AllowedHost[];
  gosumdb: string;
  /** GONOSUMDB for the install: the user's GONOSUMDB and GOPRIVATE (private modules are not in the public checksum database) */
  gonosumdb: string;
  goflags: string;
  /** what was left out, said to the user (a `direct` entry) */
  notes: string[];
  authDropped: boolean;
}

/** KEY=VALUE lines of Go's env file (`go env -w` writes it), read as data. */
export function parseGoEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*([A-Z0-9_]+)\s*=\s*(.*?)\s*$/.exec(line);
    if (m) out[m[1]!] = m[2]!;
  }
  return out;
}

function refused(why: string, details: Record<string, unknown>): MiniAgentError {
  return new MiniAgentError("invalid_request", why, { details });
}

/** Go's os.UserConfigDir()/go/env, or $GOENV; null when GOENV=off or no home is known. */
function goEnvFile(home: string | null, env: GoEnv): string | null {
  if (env.GOENV === "off") return null;
  if (env.GOENV) return env.GOENV;
  if (env.XDG_CONFIG_HOME) return path.join(env.XDG_CONFIG_HOME, "go", "env");
  return home ? path.join(home, ".config", "go", "env") : null;
}

/** Go never sends a request for localhost or a loopback address through a proxy (net/http's httpproxy rule). */
function isLoopback(host: string): boolean {
  return host === "localhost" || /^127\./.test(host) || host === "::1";
}

/**
 * The module proxy and checksum database a `go mod download` of this user's
 * uses, as Go orders its settings: the environment, then the go env file,
 * then Go's defaults. A `direct` entry is left out and said so: the install
 * sandbox fetches modules through a module proxy only, never from version
 * control. Refused (invalid_request) when no proxy remains, when one is not
 * http(s), or names a loopback address (the sandbox's own loopback is not
 * this machine's, and Go would not send it through the egress proxy).
 */
export function goProxyConfig(home: string | null, env: GoEnv): GoProxyConfig {
  const fileName = goEnvFile(home, env);
  const fileText = fileName ? readSmall(fileName) : null;
  const file = fileText !== null ? parseGoEnvFile(fileText) : {};
  const setting = (k: keyof GoEnv & string): { value: string | undefined; from: string } =>
    env[k] ? { value: env[k], from: k } : file[k] ? { value: file[k], from: fileName ?? "" } : { value: undefined, from: "default" };
  const proxy = setting("GOPROXY");
  const raw = proxy.value ?? GO_DEFAULT_PROXY;
  const entries = raw
    .split(/[,|]/)
    .map((e) => e.trim())
    .filter(Boolean);
  const notes: string[] = [];
  const proxies: string[] = [];
  let authDropped = false;
  for (const e of entries) {
    if (e === "off") throw refused(`GOPROXY=${raw} (from ${proxy.from}) turns module downloads off: nothing could be installed`, { goproxy: raw });
    if (e === "direct") {
      notes.push("GOPROXY's `direct` was left out: the install sandbox fetches modules through a module proxy only, never from version control");
      continue;
    }
    const s = stripCredentials(e);
    authDropped ||= s.dropped;
    const h = hostOfUrl(s.url);
    if (h === null) throw refused(`GOPROXY entry ${JSON.stringify(e)} (from ${proxy.from}) is not an http(s) URL`, { goproxy: raw });
    if (isLoopback(h.host))
      throw refused(
        `GOPROXY entry ${s.url} (from ${proxy.from}) names a loopback address: Go never sends those through a proxy, and the install sandbox's loopback is its own; name the proxy by an address of this machine's that is not loopback`,
        { goproxy: raw },
      );
    proxies.push(s.url);
  }
  if (proxies.length === 0)
    throw refused(
      `GOPROXY=${raw} (from ${proxy.from}) names no module proxy: \`direct\` fetches from version control, which the install sandbox does not do; set GOPROXY to a proxy, e.g. https://proxy.golang.org`,
      { goproxy: raw },
    );
  const hosts: AllowedHost[] = proxies.map((p) => hostOfUrl(p)!);
  const gosumdb = setting("GOSUMDB").value ?? GO_DEFAULT_SUMDB;
  if (gosumdb !== "off") {
    // "NAME[+KEY] [URL]": without a URL, Go reaches https://NAME (when a proxy does not serve it)
    const [nameKey, url] = gosumdb.split(/\s+/);
    const h = hostOfUrl(url ?? `https://${nameKey!.split("+")[0]}`);
    if (h === null) throw refused(`GOSUMDB=${gosumdb} names no http(s) checksum database`, { gosumdb });
    hosts.push(h);
  }
  const nosum = [setting("GONOSUMDB").value, setting("GOPRIVATE").value].filter((v): v is string => !!v).join(",");
  return {
    goproxy: proxies.join(","),
    from: proxy.from,
    hosts,
    gosumdb,
    gonosumdb: nosum,
    goflags: setting("GOFLAGS").value ?? "",
    notes,
    authDropped,
  };
}
