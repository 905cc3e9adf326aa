import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import tarStream from "tar-stream";
import { afterEach, describe, expect, it } from "vitest";
import { isMiniAgentError } from "../errors.js";
import { listLayerContent } from "../workspace/index.js";
import { packLayer } from "./layer-tar.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** the names and bodies in a layer tar, or the error that ended it */
function untar(tar: NodeJS.ReadableStream): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    const out: Record<string, string> = {};
    const extract = tarStream.extract();
    extract.on("entry", (header, stream, next) => {
      const chunks: Buffer[] = [];
      stream.on("data", (c: unknown) => chunks.push(c as Buffer));
      stream.on("error", reject);
      stream.on("end", () => {
        out[header.name] = Buffer.concat(chunks).toString();
        next();
      });
    });
    extract.on("finish", () => resolve(out));
    extract.on("error", reject);
    tar.on("error", reject);
    tar.pipe(extract);
  });
}

async function folder(): Promise<string> {
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), "ma-layertar-"));
  dirs.push(ws);
  fs.mkdirSync(path.join(ws, "node_modules/a"), { recursive: true });
  fs.writeFileSync(path.join(ws, "node_modules/a/index.js"), "one");
  return ws;
}

describe("a layer's tar", () => {
  it("holds the bytes its key covers", async () => {
    const ws = await folder();
    const content = await listLayerContent(ws, "node_modules");
    expect(await untar(packLayer(content.entries))).toMatchObject({ "a/index.js": "one" });
  });

  it("regression: a file rewritten in place after it was hashed (same inode and size) went into the layer under a key naming other bytes; the tar now fails, and its failed entry is no uncaught exception", async () => {
    const ws = await folder();
    const content = await listLayerContent(ws, "node_modules");
    fs.writeFileSync(path.join(ws, "node_modules/a/index.js"), "two");
    const err = await untar(packLayer(content.entries)).catch((e: unknown) => e);
    expect(isMiniAgentError(err, "sandbox_error")).toBe(true);
    expect((err as Error).message).toContain("a/index.js changed");
  });
});
