import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { resolveSandboxConfig, SANDBOX_DEFAULTS } from "./config.js";
import { hostConfigHash } from "./config-hash.js";
import { hostConfigTemplate } from "./host-config.js";
import { customFamilyNeeds, familyBase, familySandboxDefaults, knownFamilies, unknownFamily } from "./families.js";
import { readImageLock, recordImage } from "./image-lock.js";

describe("a family's sandbox needs (families.ts)", () => {
  it("go gets an exec, larger /tmp and more memory; node and python keep the defaults and a noexec /tmp", () => {
    const go = resolveSandboxConfig({ imageFamily: "go" });
    expect(go).toMatchObject({ imageFamily: "go", tmpExec: true, tmpfsBytes: 512 << 20, memoryBytes: 1024 << 20 });
    expect(hostConfigTemplate(go).Tmpfs).toEqual({ "/tmp": `rw,nosuid,nodev,exec,size=${512 << 20},mode=1777` });
    for (const family of ["node", "python"]) {
      const c = resolveSandboxConfig({ imageFamily: family });
      expect(c).toEqual({ ...SANDBOX_DEFAULTS, imageFamily: family });
      expect(hostConfigTemplate(c).Tmpfs).toEqual({ "/tmp": `rw,nosuid,nodev,noexec,size=${64 << 20},mode=1777` });
    }
  });

  it("the family's needs are part of the HostConfig hash, so a report of one family never covers another's HostConfig", () => {
    const node = hostConfigHash(resolveSandboxConfig({}));
    // python's HostConfig is node's; only node has an install sandbox (its mounts are in the hash)
    expect(hostConfigTemplate(resolveSandboxConfig({ imageFamily: "python" }))).toEqual(hostConfigTemplate(resolveSandboxConfig({})));
    expect(hostConfigHash(resolveSandboxConfig({ imageFamily: "python" }))).not.toBe(node);
    expect(hostConfigHash(resolveSandboxConfig({ imageFamily: "go" }))).not.toBe(node);
    expect(hostConfigHash(resolveSandboxConfig({ imageFamily: "go", tmpExec: false }))).not.toBe(hostConfigHash(resolveSandboxConfig({ imageFamily: "go" })));
  });

  it("the caller's own overrides win over the family's", () => {
    expect(resolveSandboxConfig({ imageFamily: "go", tmpfsBytes: 32 << 20, memoryBytes: 256 << 20 })).toMatchObject({
      tmpExec: true,
      tmpfsBytes: 32 << 20,
      memoryBytes: 256 << 20,
    });
  });
});

describe("custom families (a Dockerfile FROM a built-in family, pinned in the lock)", () => {
  it("follow their base's sandbox needs and are known by name; a name the lock lacks is refused with the known ones", async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), "ma-families-"));
    try {
      const lockPath = path.join(dir, "sandbox-image.lock.json");
      const d = (n: string) => `sha256:${n.repeat(64)}`;
      await recordImage(lockPath, "go", { tag: "mini-agent/sandbox-go:local", digest: d("a"), built_at: "x" });
      await recordImage(lockPath, "golint", { tag: "mini-agent/sandbox-golint:local", digest: d("b"), built_at: "x", base: "go", base_digest: d("a") });
      const lock = await readImageLock(lockPath);
      expect(familyBase("golint", lock)).toBe("go");
      expect(familyBase("nosuch", lock)).toBeNull();
      expect(knownFamilies(lock)).toEqual(["node", "python", "go", "golint"]);
      // and the base itself: its install tool is go's (install-tools.ts familyInstallKind)
      expect(customFamilyNeeds("golint", lockPath)).toEqual({ ...familySandboxDefaults("go"), familyBase: "go" });
      expect(customFamilyNeeds("go", lockPath)).toEqual({});
      expect(unknownFamily("nosuch", knownFamilies(lock))).toMatchObject({
        code: "unknown_image_family",
        message: expect.stringMatching(/node, python, go, golint/),
      });
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
