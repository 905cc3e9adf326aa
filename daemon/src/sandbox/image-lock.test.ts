import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isMiniAgentError } from "../errors.js";
import { readImageLock, recordImage } from "./image-lock.js";

let dir: string;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), "mini-agent-lock-"));
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

const digest = "sha256:" + "a".repeat(64);

describe("image lock", () => {
  it("a missing lock is null, not an error", async () => {
    expect(await readImageLock(path.join(dir, "lock.json"))).toBeNull();
  });

  it("records one family without losing the others", async () => {
    const f = path.join(dir, "lock.json");
    await recordImage(f, "node", { tag: "t:1", digest, built_at: "x" });
    await recordImage(f, "python", { tag: "t:2", digest, built_at: "y" });
    const lock = await readImageLock(f);
    expect(Object.keys(lock!.images).sort()).toEqual(["node", "python"]);
  });

  it("a corrupt lock is image_missing with the rebuild hint", async () => {
    const f = path.join(dir, "lock.json");
    await fs.writeFile(f, JSON.stringify({ schema_version: 1, images: { node: { tag: "t", digest: "latest", built_at: "x" } } }));
    const err = await readImageLock(f).catch((e) => e);
    expect(isMiniAgentError(err, "image_missing")).toBe(true);
    expect(err.message).toContain("npm run image:build");
  });
});
