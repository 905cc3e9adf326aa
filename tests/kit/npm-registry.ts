import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A minimal npm registry on 127.0.0.1 for hermetic install tests: what the
 * real npm client needs to `publish` a package (PUT of the packument with
 * its tarball attached) and to install it (GET of the packument and the
 * tarball). Nothing else, and it never talks to anything. It records every
 * request, with whether it carried credentials, so a test can say what an
 * install sandbox sent.
 */
export interface RegistryRequest {
  method: string;
  url: string;
  authorized: boolean;
}

interface Packument {
  name: string;
  "dist-tags": Record<string, string>;
  versions: Record<string, { dist: { tarball: string } } & Record<string, unknown>>;
}

export interface LocalRegistry {
  url: string;
  port: number;
  requests: RegistryRequest[];
  close(): Promise<void>;
}

export async function startLocalRegistry(): Promise<LocalRegistry> {
  const packuments = new Map<string, Packument>();
  const tarballs = new Map<string, Buffer>();
  const requests: RegistryRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      requests.push({ method: req.method ?? "", url: req.url ?? "", authorized: req.headers.authorization !== undefined });
      const url = decodeURIComponent((req.url ?? "/").split("?")[0]!);
      const self = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      if (req.method === "PUT" && !url.includes("/-/")) {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Packument & { _attachments?: Record<string, { data: string }> };
        const name = body.name;
        const p = packuments.get(name) ?? { name, "dist-tags": {}, versions: {} };
        for (const [v, meta] of Object.entries(body.versions)) {
          const file = `${name}-${v}.tgz`.replace(/^@[^/]+\//, "");
          meta.dist.tarball = `${self}/${name}/-/${file}`;
          p.versions[v] = meta;
        }
        Object.assign(p["dist-tags"], body["dist-tags"]);
        for (const [file, a] of Object.entries(body._attachments ?? {}))
          tarballs.set(`/${name}/-/${file.replace(/^@[^/]+\//, "")}`, Buffer.from(a.data, "base64"));
        packuments.set(name, p);
        res.writeHead(201, { "content-type": "application/json" }).end('{"ok":true}');
        return;
      }
      if (req.method === "GET" && tarballs.has(url)) {
        res.writeHead(200, { "content-type": "application/octet-stream" }).end(tarballs.get(url));
        return;
      }
      const p = req.method === "GET" ? packuments.get(url.slice(1)) : undefined;
      if (p) {
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(p));
        return;
      }
      res.writeHead(404, { "content-type": "application/json" }).end('{"error":"not_found"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
