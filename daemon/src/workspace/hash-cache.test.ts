import fs from "node:fs/promises";
import path from "node:path";
import type { BigIntStats } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { tempRun, type TempRun } from "../tools/workspace.testkit.js";
import { FileHashCache } from "./hash-cache.js";
import { sha256Hex } from "./hash.js";
import { computeManifest } from "./manifest.js";
import { hashNoFollow } from "./read.js";

let run: TempRun;
afterEach(async () => run?.cleanup());

/** a clock 10 s ahead: every file written by the test is old enough to be cached */
const later = () => new FileHashCache({ now: () => Date.now() + 10_000 });
const stat = (p: string) => fs.stat(p, { bigint: true });

describe("FileHashCache with real files", () => {
  it("serves an unchanged file's hash without reading it again", async () => {
    run = await tempRun({ "a.txt": "hello" });
    const file = path.join(await fs.realpath(run.ws), "a.txt");
    const cache = later();
    expect(await hashNoFollow(file, cache)).toMatchObject({ ok: true, sha256: sha256Hex("hello") });
    expect(cache.get(file, await stat(file))).toBe(sha256Hex("hello"));
  });

  it("a same-size rewrite with the old mtime put back is still seen (ctime moves; utimes cannot set it)", async () => {
    run = await tempRun({ "a.txt": "hello" });
    const file = path.join(await fs.realpath(run.ws), "a.txt");
    const cache = later();
    // a whole-second mtime, so utimes can put back exactly the same nanoseconds
    await fs.utimes(file, 1_700_000_000, 1_700_000_000);
    await hashNoFollow(file, cache);
    const before = await stat(file);
    expect(cache.get(file, before)).toBe(sha256Hex("hello"));
    await new Promise((r) => setTimeout(r, 20));
    await fs.writeFile(file, "HELLO");
    await fs.utimes(file, 1_700_000_000, 1_700_000_000);
    const after = await stat(file);
    expect([after.ino, after.size, after.mtimeNs]).toEqual([before.ino, before.size, before.mtimeNs]);
    expect(after.ctimeNs).not.toBe(before.ctimeNs);
    expect(cache.get(file, after)).toBeUndefined();
    expect(await hashNoFollow(file, cache)).toMatchObject({ ok: true, sha256: sha256Hex("HELLO") });
  });

  it("a file replaced by another (rename over it) is hashed again", async () => {
    run = await tempRun({ "a.txt": "one", "b.txt": "two" });
    const ws = await fs.realpath(run.ws);
    const cache = later();
    await hashNoFollow(path.join(ws, "a.txt"), cache);
    await fs.rename(path.join(ws, "b.txt"), path.join(ws, "a.txt"));
    expect(cache.get(path.join(ws, "a.txt"), await stat(path.join(ws, "a.txt")))).toBeUndefined();
    expect(await hashNoFollow(path.join(ws, "a.txt"), cache)).toMatchObject({ sha256: sha256Hex("two") });
  });

  it("a file changed just now (racily clean) is never cached", async () => {
    run = await tempRun({ "a.txt": "x" });
    const file = path.join(await fs.realpath(run.ws), "a.txt");
    const cache = new FileHashCache();
    await fs.writeFile(file, "fresh");
    await hashNoFollow(file, cache);
    expect(cache.size).toBe(0);
  });

  it("computeManifest gives the same manifest with and without the cache, and follows a change", async () => {
    run = await tempRun({ "a.txt": "a", "d/b.txt": "b", "d/e/c.txt": "c" });
    const cache = later();
    const plain = await computeManifest(run.ws, { hashCache: null });
    expect(await computeManifest(run.ws, { hashCache: cache })).toEqual(plain);
    expect(cache.size).toBe(3);
    expect(await computeManifest(run.ws, { hashCache: cache })).toEqual(plain);
    await fs.writeFile(path.join(run.ws, "d/b.txt"), "B");
    const changed = await computeManifest(run.ws, { hashCache: cache });
    expect(changed.files["d/b.txt"]).toBe(sha256Hex("B"));
    expect(changed).toEqual(await computeManifest(run.ws, { hashCache: null }));
  });
});

describe("FileHashCache bookkeeping", () => {
  const st = (over: Partial<Record<"dev" | "ino" | "size" | "mtimeNs" | "ctimeNs", bigint>> = {}) =>
    ({ dev: 1n, ino: 2n, size: 3n, mtimeNs: 1_000_000_000n, ctimeNs: 1_000_000_000n, ...over }) as unknown as BigIntStats;

  it("keeps nothing when the file changed while it was read", () => {
    const cache = new FileHashCache({ now: () => 100_000 });
    cache.set("/f", st(), st({ ctimeNs: 1_000_000_001n }), "h");
    expect(cache.get("/f", st())).toBeUndefined();
    cache.set("/f", st(), st(), "h");
    expect(cache.get("/f", st())).toBe("h");
    // any stamp that moves is a miss
    for (const k of ["dev", "ino", "size", "mtimeNs", "ctimeNs"] as const) expect(cache.get("/f", st({ [k]: 9n }))).toBeUndefined();
  });

  it("a stamp in the future (the clock stepped back) is not trusted", () => {
    const cache = new FileHashCache({ now: () => 500 });
    cache.set("/f", st(), st(), "h");
    expect(cache.size).toBe(0);
  });

  it("starts over beyond its size bound", () => {
    const cache = new FileHashCache({ now: () => 100_000, maxEntries: 2 });
    for (const f of ["/a", "/b", "/c"]) cache.set(f, st(), st(), f);
    expect(cache.size).toBe(1);
    expect(cache.get("/c", st())).toBe("/c");
  });

  it("the repo map's text answer follows the same stamps: kept only when nothing moved during the sniff, never when racily clean, a miss when a stamp moves", () => {
    const cache = new FileHashCache({ now: () => 100_000 });
    cache.setTextual("/t", st(), st({ size: 4n }), true);
    expect(cache.getTextual("/t", st())).toBeUndefined();
    cache.setTextual("/t", st(), st(), false);
    expect(cache.getTextual("/t", st())).toBe(false);
    for (const k of ["dev", "ino", "size", "mtimeNs", "ctimeNs"] as const) expect(cache.getTextual("/t", st({ [k]: 9n }))).toBeUndefined();
    // a hash and a text answer for one path are separate facts
    expect(cache.get("/t", st())).toBeUndefined();
    const racy = new FileHashCache({ now: () => 1_500 });
    racy.setTextual("/t", st(), st(), true);
    expect(racy.getTextual("/t", st())).toBeUndefined();
  });
});
