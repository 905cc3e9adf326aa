import { describe, expect, it } from "vitest";
import { resolveSandboxConfig } from "./config.js";
import { poolKey, SandboxPool } from "./sandbox-pool.js";

const DIGEST = `sha256:${"a".repeat(64)}`;

describe("poolKey", () => {
  const base = { config: resolveSandboxConfig({ instance: "0123456789abcdef" }), digest: DIGEST, withControl: false };

  it("is the same for the same request", () => {
    expect(poolKey(base)).toBe(poolKey({ ...base, config: resolveSandboxConfig({ instance: "0123456789abcdef" }) }));
  });

  it.each([
    ["the image digest", { ...base, digest: `sha256:${"b".repeat(64)}` }],
    ["the /control mount", { ...base, withControl: true }],
    ["the runtime", { ...base, config: resolveSandboxConfig({ instance: "0123456789abcdef", runtime: "runsc" }) }],
    ["the memory limit", { ...base, config: resolveSandboxConfig({ instance: "0123456789abcdef", memoryBytes: 256 * 1024 * 1024 }) }],
    ["the image family", { ...base, config: resolveSandboxConfig({ instance: "0123456789abcdef", imageFamily: "go" }) }],
    ["the daemon instance", { ...base, config: resolveSandboxConfig({ instance: "fedcba9876543210" }) }],
    ["the env", { ...base, config: resolveSandboxConfig({ instance: "0123456789abcdef", baseEnv: { PATH: "/bin" } }) }],
  ])("changes with %s", (_what, other) => {
    expect(poolKey(other)).not.toBe(poolKey(base));
  });
});

describe("SandboxPool", () => {
  it("refuses a size that is not a whole number >= 0", () => {
    for (const size of [-1, 1.5, Number.NaN]) expect(() => new SandboxPool({ docker: {} as never, size })).toThrow(/whole number/);
  });

  it("size 0 never touches the engine: take answers null, warm does nothing", async () => {
    const pool = new SandboxPool({ docker: {} as never, size: 0 });
    const req = { config: resolveSandboxConfig({}), digest: DIGEST, withControl: false };
    pool.warm(req);
    expect(await pool.take(req)).toBeNull();
    expect(await pool.drain()).toBe(0);
  });
});
