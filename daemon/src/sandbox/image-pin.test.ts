import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type Docker from "dockerode";
import { afterAll, describe, expect, it } from "vitest";
import { isMiniAgentError } from "../errors.js";
import { resolveSandboxConfig } from "./config.js";
import { recordImage } from "./image-lock.js";
import { resolvePinnedImage } from "./image-pin.js";
import { PROTOCOL_LABEL, SANDBOX_PROTOCOL } from "./labels.js";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ma-image-pin-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

// no image of the family is pinned, so the engine is never asked
const noEngine = {} as Docker;

async function refusal(family: string, lockPath: string): Promise<{ code: string; message: string }> {
  try {
    await resolvePinnedImage(noEngine, resolveSandboxConfig({ imageFamily: family }), lockPath);
  } catch (err) {
    if (isMiniAgentError(err)) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error("expected a refusal");
}

describe("a family with no pinned image is refused with the command that builds it", () => {
  it("regression: a python run on a lock with only node said to rebuild without --family, which builds node again", async () => {
    const lockPath = path.join(dir, "only-node", "sandbox-image.lock.json");
    await recordImage(lockPath, "node", { tag: "t", digest: `sha256:${"a".repeat(64)}`, built_at: "x" });
    const r = await refusal("python", lockPath);
    expect(r.code).toBe("image_missing");
    expect(r.message).toContain(`npm run image:build -- --family python --state-dir ${path.dirname(lockPath)}`);
  });

  it("node, the build's default family, needs no --family", async () => {
    const r = await refusal("node", path.join(dir, "none", "sandbox-image.lock.json"));
    expect(r.code).toBe("image_missing");
    expect(r.message).toContain("npm run image:build -- --state-dir");
    expect(r.message).not.toContain("--family");
  });
});

describe("an image of another sandbox protocol is refused with the command that rebuilds it", () => {
  const digest = `sha256:${"b".repeat(64)}`;
  const engineWith = (labels: Record<string, string> | null) =>
    ({
      getImage: (ref: string) => ({
        inspect: async () =>
          ref === digest ? { Id: digest, Config: { Labels: labels } } : Promise.reject(Object.assign(new Error("no"), { statusCode: 404 })),
      }),
    }) as unknown as Docker;
  const lockPath = path.join(dir, "protocol", "sandbox-image.lock.json");

  it("regression: an image built before the workspace went in over the spawner's channel failed inside the first run (lost command channel) instead of being refused", async () => {
    await recordImage(lockPath, "python", { tag: "t", digest, built_at: "x" });
    const config = resolveSandboxConfig({ imageFamily: "python" });
    for (const labels of [null, { [PROTOCOL_LABEL]: "1" }]) {
      const err = await resolvePinnedImage(engineWith(labels), config, lockPath).then(
        () => null,
        (e: unknown) => e,
      );
      expect(isMiniAgentError(err, "image_missing")).toBe(true);
      expect((err as Error).message).toContain(`npm run image:build -- --family python --state-dir ${path.dirname(lockPath)}`);
      expect((err as Error).message).toContain(`protocol ${SANDBOX_PROTOCOL}`);
    }
    expect(await resolvePinnedImage(engineWith({ [PROTOCOL_LABEL]: SANDBOX_PROTOCOL }), config, lockPath)).toBe(digest);
  });
});
