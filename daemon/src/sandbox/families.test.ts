import { describe, expect, it } from "vitest";
import { resolveSandboxConfig, SANDBOX_DEFAULTS } from "./config.js";
import { hostConfigHash, hostConfigTemplate } from "./host-config.js";

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
    expect(hostConfigHash(resolveSandboxConfig({ imageFamily: "python" }))).toBe(node);
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
