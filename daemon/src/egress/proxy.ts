import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import { pino, type Logger } from "pino";
import { type AllowedHost, formatHost, isAllowed } from "./allowlist.js";

/**
 * The install sandbox's only way out (issue 25): an HTTP proxy on a Unix
 * socket that the daemon bind-mounts into the sandbox, which itself keeps
 * NetworkMode none. CONNECT (https) and absolute-URI requests (http) are
 * checked against the allowlist by the name the client asked for, BEFORE any
 * lookup or connection: a refused name is answered 403 with the reason and
 * recorded, and nothing leaves this machine for it.
 */
export interface EgressEvent {
  verdict: "allowed" | "refused";
  host: string;
  port: number;
  /** CONNECT, or the method of a plain http request */
  method: string;
  reason?: string;
}

export type Connect = (host: string, port: number) => net.Socket;

export interface EgressProxyOptions {
  allow: readonly AllowedHost[];
  /** how an allowed name is reached (default: a TCP connection); tests replace it to see what would have been dialled */
  connect?: Connect;
  /** must not throw: called for every decision, in order */
  onEvent?: (e: EgressEvent) => void;
  log?: Logger;
}

const HOP_HEADERS = new Set(["proxy-connection", "proxy-authorization", "connection", "keep-alive", "te", "trailer", "transfer-encoding", "upgrade"]);

/** `host:port` of a CONNECT target, or null when it is not one. */
function connectTarget(raw: string | undefined): { host: string; port: number } | null {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]\s]+):(\d{1,5})$/.exec(raw ?? "");
  if (!m) return null;
  const port = Number(m[2]);
  return port >= 1 && port <= 65535 ? { host: m[1]!.replace(/^\[|\]$/g, "").toLowerCase(), port } : null;
}

export class EgressProxy {
  readonly events: EgressEvent[] = [];
  private readonly sockets = new Set<net.Socket>();

  private constructor(
    private readonly server: http.Server,
    readonly socketPath: string,
  ) {}

  get refusals(): EgressEvent[] {
    return this.events.filter((e) => e.verdict === "refused");
  }

  /** Listens on `socketPath` (made 0666: the sandbox user connects; the folder around it is what guards it). */
  static async listen(socketPath: string, opts: EgressProxyOptions): Promise<EgressProxy> {
    const connect: Connect = opts.connect ?? ((host, port) => net.connect({ host, port }));
    const log = opts.log ?? pino({ level: "silent" });
    const server = http.createServer();
    const proxy = new EgressProxy(server, socketPath);
    const decide = (method: string, host: string, port: number): string | null => {
      const ok = isAllowed(opts.allow, host, port);
      const reason = ok
        ? undefined
        : `${formatHost({ host, port })} is not an allowed package host (allowed: ${opts.allow.map(formatHost).join(", ") || "none"})`;
      const e: EgressEvent = { verdict: ok ? "allowed" : "refused", host, port, method, ...(reason && { reason }) };
      proxy.events.push(e);
      if (ok) log.info({ host, port, method }, "egress allowed");
      else log.warn({ host, port, method }, "egress refused");
      try {
        opts.onEvent?.(e);
      } catch {
        // a listener's failure is not the proxy's
      }
      return reason ?? null;
    };
    server.on("connection", (s: net.Socket) => {
      proxy.sockets.add(s);
      s.on("close", () => proxy.sockets.delete(s));
    });
    server.on("connect", (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
      client.on("error", () => undefined);
      const t = connectTarget(req.url);
      if (!t) return void client.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\nCONNECT takes host:port\n");
      const refused = decide("CONNECT", t.host, t.port);
      if (refused) return void client.end(`HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n${refused}\n`);
      const up = connect(t.host, t.port);
      proxy.sockets.add(up);
      up.on("close", () => proxy.sockets.delete(up));
      up.once("connect", () => {
        client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
        if (head.length > 0) up.write(head);
        up.pipe(client);
        client.pipe(up);
      });
      up.on("error", () => client.end("HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n"));
      client.on("close", () => up.destroy());
    });
    server.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
      let url: URL | null = null;
      try {
        url = new URL(req.url ?? "");
      } catch {
        url = null;
      }
      if (url?.protocol !== "http:") {
        res.writeHead(400, { "content-type": "text/plain" }).end("a proxy request names an absolute http:// URL; use CONNECT for https\n");
        return;
      }
      const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
      const port = url.port ? Number(url.port) : 80;
      const refused = decide(req.method ?? "GET", host, port);
      if (refused) {
        res.writeHead(403, { "content-type": "text/plain" }).end(`${refused}\n`);
        return;
      }
      const headers: http.OutgoingHttpHeaders = {};
      for (const [k, v] of Object.entries(req.headers)) if (!HOP_HEADERS.has(k) && v !== undefined) headers[k] = v;
      const up = http.request({
        method: req.method,
        path: `${url.pathname}${url.search}`,
        headers,
        createConnection: () => connect(host, port),
      });
      up.on("response", (r) => {
        const out: http.OutgoingHttpHeaders = {};
        for (const [k, v] of Object.entries(r.headers)) if (!HOP_HEADERS.has(k) && v !== undefined) out[k] = v;
        res.writeHead(r.statusCode ?? 502, out);
        r.pipe(res);
      });
      up.on("error", () => {
        if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" }).end(`${host}:${port} could not be reached\n`);
        else res.destroy();
      });
      req.pipe(up);
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(socketPath, () => {
        server.off("error", reject);
        resolve();
      });
    });
    fs.chmodSync(socketPath, 0o666);
    return proxy;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
