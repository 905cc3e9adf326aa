import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { listLayerContent } from "../workspace/index.js";
import { LayerStatStore } from "./layer-stat-store.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function tmp(prefix: string): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  dirs.push(d);
  return d;
}

/** a workspace with a node_modules of one file, and its stat index */
async function indexed(): Promise<{ ws: string; index: Awaited<ReturnType<typeof listLayerContent>>["index"] }> {
  const ws = tmp("ma-statws-");
  fs.mkdirSync(path.join(ws, "node_modules/a"), { recursive: true });
  fs.writeFileSync(path.join(ws, "node_modules/a/index.js"), "x");
  return { ws, index: (await listLayerContent(ws, "node_modules", undefined, { now: () => Date.now() + 10_000 })).index };
}

const silent = pino({ level: "silent" });

describe("the stat index store", () => {
  it("reads back what it wrote (one file per workspace and folder, beside the layer records)", async () => {
    const store = new LayerStatStore(tmp("ma-statstore-"), silent);
    const { ws, index } = await indexed();
    store.write(index);
    expect(store.read(ws, "node_modules")).toEqual(index);
    expect(path.basename(store.path(ws, "node_modules"))).toMatch(/^stat-[a-f0-9]{64}\.json$/);
    expect(store.read(ws, ".venv")).toBeNull();
  });

  it("regression: a corrupt, foreign or other-schema index reads as none (the folder is hashed whole), never an error", async () => {
    const store = new LayerStatStore(tmp("ma-statstore-"), silent);
    const { ws, index } = await indexed();
    const file = store.path(ws, "node_modules");
    fs.mkdirSync(path.dirname(file), { recursive: true });
    for (const body of [
      '{"schema_version":1,"workspace":', // cut short by a crash of something else
      "\0\0\0",
      JSON.stringify({ ...index, schema_version: 2 }),
      JSON.stringify({ ...index, workspace: "/another/workspace" }),
      JSON.stringify({ ...index, folder: ".venv" }),
      JSON.stringify({ ...index, entries: [{ ...index.entries[0], sha256: "not a hash" }] }),
      JSON.stringify({ ...index, unknown: true }),
    ]) {
      fs.writeFileSync(file, body);
      expect(store.read(ws, "node_modules")).toBeNull();
    }
    fs.rmSync(file);
    fs.mkdirSync(file); // not a file at all
    expect(store.read(ws, "node_modules")).toBeNull();
  });

  it("forgetting a removed layer's key removes the indexes that led to it and keeps the others", async () => {
    const store = new LayerStatStore(tmp("ma-statstore-"), silent);
    const one = await indexed();
    const two = await indexed();
    fs.writeFileSync(path.join(two.ws, "node_modules/a/index.js"), "y");
    const other = (await listLayerContent(two.ws, "node_modules")).index;
    store.write(one.index);
    store.write(other);
    fs.writeFileSync(path.join(path.dirname(store.path(one.ws, "node_modules")), `stat-${"0".repeat(64)}.json`), "{");
    store.forget(one.index.key);
    expect(store.read(one.ws, "node_modules")).toBeNull();
    expect(store.read(two.ws, "node_modules")).toEqual(other);
  });

  it("an index that cannot be written is left out without an error, and no temp file stays", async () => {
    const dir = tmp("ma-statstore-");
    const { ws, index } = await indexed();
    const store = new LayerStatStore(dir, silent);
    // a folder where the index goes: the rename fails after the temp file was written
    fs.mkdirSync(path.join(store.path(ws, "node_modules"), "x"), { recursive: true });
    expect(() => store.write(index)).not.toThrow();
    expect(fs.readdirSync(dir)).toEqual([path.basename(store.path(ws, "node_modules"))]);
  });
});
