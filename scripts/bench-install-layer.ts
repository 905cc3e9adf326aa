import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import tarStream from "tar-stream";
import type { DockerExecutor } from "../daemon/src/sandbox/docker-executor.js";
import { startLocalRegistry } from "../tests/kit/npm-registry.js";

/**
 * The second figure of `npm run bench:layers -- --install`: the first build of
 * a layer made by the install sandbox (`env build --install`): `npm install`
 * against a registry on 127.0.0.1 (tests/kit/npm-registry.ts) that serves
 * packages this bench publishes itself, through the egress proxy, then the
 * layer made of what it installed. Nothing leaves this machine.
 */

/** A package tarball of `bytes` of hex text (compresses about 2x; a real node_modules' JavaScript compresses more). */
async function tarball(name: string, bytes: number): Promise<Buffer> {
  const pack = tarStream.pack();
  pack.entry({ name: "package/package.json" }, JSON.stringify({ name, version: "1.0.0", main: "f0.js" }));
  const per = 256 * 1024;
  for (let i = 0; i * per < bytes; i++) pack.entry({ name: `package/f${i}.js` }, `// ${crypto.randomBytes(per / 2).toString("hex")}\n`);
  pack.finalize();
  const chunks: Buffer[] = [];
  for await (const c of pack.pipe(zlib.createGzip())) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

async function publish(url: string, name: string, tgz: Buffer): Promise<void> {
  const body = {
    name,
    "dist-tags": { latest: "1.0.0" },
    versions: { "1.0.0": { name, version: "1.0.0", dist: { tarball: "" } } },
    _attachments: { [`${name}-1.0.0.tgz`]: { data: tgz.toString("base64") } },
  };
  const res = await fetch(`${url}${name}`, { method: "PUT", body: JSON.stringify(body), headers: { "content-type": "application/json" } });
  if (res.status !== 201) throw new Error(`publishing ${name} to the local registry: HTTP ${res.status}`);
}

export interface InstallFigure {
  packages: number;
  tarballBytes: number;
  installMs: number;
  exitCode: number | null;
  stderrTail: string;
  layerBytes: number | null;
}

/** Publishes `mib` MiB over `packages` packages, then times `ex.install` of them into a fresh workspace. */
export async function benchInstallLayer(
  ex: DockerExecutor,
  root: string,
  mib: number,
  packages: number,
): Promise<{ figure: InstallFigure; workspace: string }> {
  const registry = await startLocalRegistry();
  try {
    const names = Array.from({ length: packages }, (_, i) => `bench-dep-${i}`);
    let tarballBytes = 0;
    for (const n of names) {
      const tgz = await tarball(n, Math.ceil((mib * 1024 * 1024) / packages));
      tarballBytes += tgz.length;
      await publish(registry.url, n, tgz);
    }
    const ws = path.join(root, "install-project");
    fs.mkdirSync(path.join(ws, "src"), { recursive: true });
    fs.writeFileSync(path.join(ws, "src/index.js"), "module.exports = 1;\n");
    fs.writeFileSync(
      path.join(ws, "package.json"),
      JSON.stringify({ name: "bench-install", dependencies: Object.fromEntries(names.map((n) => [n, "1.0.0"])) }),
    );
    const t = performance.now();
    const out = await ex.install({
      workspace: ws,
      spec: { forbidden: [], include: [] },
      command: "npm install --no-package-lock --ignore-scripts",
      allow: [{ host: "127.0.0.1", port: registry.port }],
      tool: { kind: "npm", registry: registry.url },
      timeoutMs: 600_000,
    });
    const figure = {
      packages,
      tarballBytes,
      installMs: performance.now() - t,
      exitCode: out.exitCode,
      stderrTail: out.stderr.slice(-400),
      layerBytes: out.layer?.size_bytes ?? null,
    };
    return { figure, workspace: ws };
  } finally {
    await registry.close();
  }
}
