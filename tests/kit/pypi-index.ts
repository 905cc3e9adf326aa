import crypto from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { storedZip } from "./zip.js";

/**
 * A PEP 503 "simple" package index on 127.0.0.1 for hermetic pip tests,
 * serving wheels the test describes and this kit builds itself (a wheel is a
 * zip of the package with NAME-VERSION.dist-info/{METADATA,WHEEL,RECORD}).
 * It records every request, with whether it carried credentials, so a test
 * can say what an install sandbox sent. It never talks to anything.
 */
export interface WheelSpec {
  name: string;
  version: string;
  /** the package's files, by path inside site-packages */
  files: Record<string, string>;
}

export interface PypiIndex {
  /** the index's simple URL, e.g. http://127.0.0.1:PORT/simple/ */
  url: string;
  port: number;
  requests: Array<{ method: string; url: string; authorized: boolean }>;
  close(): Promise<void>;
}

const b64url = (b: Buffer) => b.toString("base64url");
/** PEP 503's normalized project name */
const normalize = (n: string) => n.toLowerCase().replace(/[-_.]+/g, "-");

/** The wheel's file name and bytes: pure Python, any platform. */
export function buildWheel(w: WheelSpec): { file: string; bytes: Buffer } {
  const dist = `${w.name.replace(/-/g, "_")}-${w.version}`;
  const entries: Array<[string, Buffer]> = Object.entries(w.files).map(([p, c]) => [p, Buffer.from(c)]);
  entries.push([`${dist}.dist-info/METADATA`, Buffer.from(`Metadata-Version: 2.1\nName: ${w.name}\nVersion: ${w.version}\n`)]);
  entries.push([`${dist}.dist-info/WHEEL`, Buffer.from("Wheel-Version: 1.0\nGenerator: mini-agent-test-kit\nRoot-Is-Purelib: true\nTag: py3-none-any\n")]);
  const record = entries.map(([p, d]) => `${p},sha256=${b64url(crypto.createHash("sha256").update(d).digest())},${d.length}`);
  record.push(`${dist}.dist-info/RECORD,,`);
  entries.push([`${dist}.dist-info/RECORD`, Buffer.from(`${record.join("\n")}\n`)]);
  return { file: `${dist}-py3-none-any.whl`, bytes: storedZip(entries) };
}

export async function startPypiIndex(wheels: readonly WheelSpec[]): Promise<PypiIndex> {
  const files = new Map<string, Buffer>();
  const projects = new Map<string, string[]>();
  for (const w of wheels) {
    const built = buildWheel(w);
    files.set(built.file, built.bytes);
    const list = projects.get(normalize(w.name)) ?? [];
    list.push(built.file);
    projects.set(normalize(w.name), list);
  }
  const requests: PypiIndex["requests"] = [];
  const server = http.createServer((req, res) => {
    requests.push({ method: req.method ?? "", url: req.url ?? "", authorized: req.headers.authorization !== undefined });
    const url = (req.url ?? "/").split("?")[0]!;
    const page = /^\/simple\/([^/]+)\/?$/.exec(url);
    const file = /^\/files\/([^/]+)$/.exec(url);
    if (page && projects.has(normalize(page[1]!))) {
      const links = projects
        .get(normalize(page[1]!))!
        .map((f) => `<a href="/files/${f}#sha256=${crypto.createHash("sha256").update(files.get(f)!).digest("hex")}">${f}</a><br/>`);
      res.writeHead(200, { "content-type": "text/html" }).end(`<!DOCTYPE html><html><body>\n${links.join("\n")}\n</body></html>\n`);
    } else if (file && files.has(file[1]!)) {
      res.writeHead(200, { "content-type": "application/octet-stream" }).end(files.get(file[1]!));
    } else {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/simple/`,
    port,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
