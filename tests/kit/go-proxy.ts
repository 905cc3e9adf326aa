import crypto from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { storedZip } from "./zip.js";

/**
 * A Go module proxy (the GOPROXY protocol: /MODULE/@v/list, VERSION.info,
 * .mod, .zip) on 127.0.0.1 for hermetic Go install tests, serving modules the
 * test describes; the zips (every name under MODULE@VERSION/) are built here.
 * `goSum` gives the go.sum lines Go itself would write (the h1: dirhash), so
 * a test's go.sum is checked for real and no checksum database is asked.
 *
 * The URL a sandbox is given names 0.0.0.0, not 127.0.0.1: Go never sends a
 * request for a loopback address through a proxy (net/http's proxy rule), and
 * the install sandbox's own loopback is not this machine's. 0.0.0.0 is no
 * loopback address to Go, so it goes through the egress proxy, which connects
 * to it here, on this machine (Linux takes 0.0.0.0 as the local host): this
 * server still listens on 127.0.0.1 only, and nothing leaves the machine.
 */
export interface GoModuleSpec {
  path: string;
  version: string;
  /** files by path inside the module; go.mod is required */
  files: Record<string, string>;
}

export interface GoProxy {
  /** the GOPROXY value an install sandbox uses (http://0.0.0.0:PORT) */
  url: string;
  port: number;
  requests: Array<{ method: string; url: string; authorized: boolean }>;
  /** the two go.sum lines of a served module */
  goSum(path: string, version: string): string;
  close(): Promise<void>;
}

const sha256 = (d: Buffer | string) => crypto.createHash("sha256").update(d).digest();

/** Go's dirhash Hash1: SHA-256 over "HEX  NAME\n" of every file, by name. */
export function hash1(files: ReadonlyArray<[string, Buffer]>): string {
  const summary = [...files]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([n, d]) => `${sha256(d).toString("hex")}  ${n}\n`)
    .join("");
  return `h1:${sha256(summary).toString("base64")}`;
}

export async function startGoProxy(modules: readonly GoModuleSpec[]): Promise<GoProxy> {
  const byKey = new Map<string, { spec: GoModuleSpec; zip: Buffer; entries: Array<[string, Buffer]> }>();
  for (const m of modules) {
    const entries: Array<[string, Buffer]> = Object.entries(m.files).map(([p, c]) => [`${m.path}@${m.version}/${p}`, Buffer.from(c)]);
    byKey.set(`${m.path}@${m.version}`, { spec: m, zip: storedZip(entries), entries });
  }
  const requests: GoProxy["requests"] = [];
  const server = http.createServer((req, res) => {
    requests.push({ method: req.method ?? "", url: req.url ?? "", authorized: req.headers.authorization !== undefined });
    const url = (req.url ?? "/").split("?")[0]!;
    const m = /^\/(.+)\/@v\/(list|(v[^/]+)\.(info|mod|zip))$/.exec(url);
    const send = (type: string, body: string | Buffer) => res.writeHead(200, { "content-type": type }).end(body);
    if (m && m[2] === "list") {
      const versions = modules.filter((x) => x.path === m[1]).map((x) => x.version);
      if (versions.length > 0) return void send("text/plain", `${versions.join("\n")}\n`);
    } else if (m) {
      const hit = byKey.get(`${m[1]}@${m[3]}`);
      if (hit && m[4] === "info") return void send("application/json", JSON.stringify({ Version: hit.spec.version, Time: "2026-01-01T00:00:00Z" }));
      if (hit && m[4] === "mod") return void send("text/plain", hit.spec.files["go.mod"] ?? "");
      if (hit && m[4] === "zip") return void send("application/zip", hit.zip);
    }
    res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://0.0.0.0:${port}`,
    port,
    requests,
    goSum(path, version) {
      const hit = byKey.get(`${path}@${version}`);
      if (!hit) throw new Error(`the proxy serves no ${path}@${version}`);
      const mod = hash1([["go.mod", Buffer.from(hit.spec.files["go.mod"] ?? "")]]);
      return `${path} ${version} ${hash1(hit.entries)}\n${path} ${version}/go.mod ${mod}\n`;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
