import { afterEach, describe, expect, it, vi } from "vitest";
import { isMiniAgentError } from "../errors.js";
import { buildExecEnv, resolveSandboxConfig, SANDBOX_DEFAULTS } from "./config.js";
import { hostConfigHash } from "./config-hash.js";
import { hostConfigTemplate } from "./host-config.js";
import { INSTANCE_LABEL, RUN_LABEL, sandboxLabels } from "./labels.js";
import { DENIED_SYSCALLS, seccompProfile } from "./seccomp-profile.js";
import { CappedOutput } from "./output.js";

describe("sandbox config", () => {
  it("uses the one defaults object and applies overrides", () => {
    expect(resolveSandboxConfig({})).toEqual(SANDBOX_DEFAULTS);
    expect(resolveSandboxConfig({ runtime: "runsc", pidsLimit: 64 })).toMatchObject({
      runtime: "runsc",
      pidsLimit: 64,
      memoryBytes: SANDBOX_DEFAULTS.memoryBytes,
    });
  });

  it("rejects an unknown option loudly, naming the known ones", () => {
    try {
      resolveSandboxConfig({ memory: 1 });
      expect.unreachable();
    } catch (err) {
      expect(isMiniAgentError(err, "invalid_fields")).toBe(true);
      expect((err as Error).message).toContain("memoryBytes");
    }
  });

  it("rejects an unknown runtime", () => {
    expect(() => resolveSandboxConfig({ runtime: "kata" })).toThrow();
  });

  it("refuses env names outside the allowlist instead of dropping them", () => {
    const c = resolveSandboxConfig({});
    expect(buildExecEnv(c, { CI: "1" })).toContain("CI=1");
    expect(() => buildExecEnv(c, { OPENAI_API_KEY: "sk-x" })).toThrow(/not allowed/);
  });

  it("never lets an allowlisted caller value replace PATH unless PATH is allowlisted", () => {
    const env = buildExecEnv(resolveSandboxConfig({}), {});
    expect(env).toContain("PATH=/usr/local/bin:/usr/bin:/bin");
    expect(env.some((e) => e.startsWith("HOME="))).toBe(true);
  });
});

describe("host config", () => {
  it("asks for the whole isolation set", () => {
    const t = hostConfigTemplate(resolveSandboxConfig({}));
    expect(t).toMatchObject({ NetworkMode: "none", ReadonlyRootfs: true, Privileged: false, CapDrop: ["ALL"], IpcMode: "none", Init: true, Binds: null });
    expect(t.MemorySwap).toBe(t.Memory);
    expect((t.SecurityOpt as string[])[0]).toBe("no-new-privileges");
    expect((t.SecurityOpt as string[]).some((o) => o.includes("unconfined"))).toBe(false);
    expect((t.Tmpfs as Record<string, string>)["/tmp"]).toMatch(/nosuid,nodev,noexec,size=\d+/);
  });

  it("hash changes with anything that changes isolation, and is stable otherwise", () => {
    const a = hostConfigHash(resolveSandboxConfig({}));
    expect(hostConfigHash(resolveSandboxConfig({}))).toBe(a);
    expect(hostConfigHash(resolveSandboxConfig({ runtime: "runsc" }))).not.toBe(a);
    expect(hostConfigHash(resolveSandboxConfig({ memoryBytes: 256 * 1024 * 1024 }))).not.toBe(a);
  });
});

describe("the isolation hash covers the other sandbox kinds a run uses (issue 25)", () => {
  afterEach(() => {
    vi.doUnmock("./install-sandbox.js");
    vi.doUnmock("./host-config.js");
    vi.resetModules();
  });

  /** hostConfigHash of the node config, with one module's export replaced as a changed build would have it */
  async function hashWith(
    mod: "./install-sandbox.js" | "./host-config.js",
    change: (m: Record<string, unknown>) => Record<string, unknown>,
    overrides: Record<string, unknown> = {},
  ) {
    vi.resetModules();
    vi.doMock(mod, async (original) => change((await original()) as Record<string, unknown>));
    const { hostConfigHash: hash } = await import("./config-hash.js");
    return hash(resolveSandboxConfig(overrides));
  }

  // Regression: the install sandbox's extra mounts and a dependency layer's mount were outside the hash, so
  // a report proved nothing about them and a changed mount never sent the live gate back to the probes.
  it("a changed install sandbox mount or layer mount changes the hash", async () => {
    const base = hostConfigHash(resolveSandboxConfig({}));
    const npmWritable = await hashWith("./install-sandbox.js", (m) => ({
      ...m,
      INSTALL_MOUNT_SHAPE: (m.INSTALL_MOUNT_SHAPE as Array<Record<string, unknown>>).map((x) => ({ ...x, ReadOnly: false })),
    }));
    expect(npmWritable).not.toBe(base);
    const layerWritable = await hashWith("./host-config.js", (m) => ({
      ...m,
      layerMount: (l: never) => ({ ...(m.layerMount as (l: never) => Record<string, unknown>)(l), ReadOnly: false }),
    }));
    expect(layerWritable).not.toBe(base);
  });

  it("a configuration without an install sandbox (another family, or runsc) has no install mounts in its hash", async () => {
    for (const overrides of [{ imageFamily: "python" }, { runtime: "runsc" }]) {
      const without = hostConfigHash(resolveSandboxConfig(overrides));
      expect(await hashWith("./install-sandbox.js", (m) => ({ ...m, hasInstallSandbox: () => true }), overrides)).not.toBe(without);
    }
  });
});

describe("seccomp profile", () => {
  it("denies by default and never allows the escape-relevant syscalls (io_uring got through the engine's default)", () => {
    const p = seccompProfile() as { defaultAction: string; syscalls: Array<{ names: string[]; action: string; args?: unknown[] }> };
    expect(p.defaultAction).toBe("SCMP_ACT_ERRNO");
    const allowed = new Set(p.syscalls.filter((s) => s.action === "SCMP_ACT_ALLOW" && !s.args).flatMap((s) => s.names));
    for (const n of ["io_uring_setup", "keyctl", "unshare", "mount", "bpf", "userfaultfd", "ptrace", "setns"]) expect(allowed.has(n)).toBe(false);
    for (const n of DENIED_SYSCALLS) expect(allowed.has(n)).toBe(false);
    for (const n of ["read", "write", "openat", "execve", "epoll_wait", "futex", "wait4"]) expect(allowed.has(n)).toBe(true);
    const clone = p.syscalls.find((s) => s.names.includes("clone"));
    expect(clone?.args).toHaveLength(1);
  });

  it("answers clone3 with ENOSYS on runc but passes it to gVisor (its --oci-seccomp turns errnoRet into EPERM, which broke Node's threads)", () => {
    type Rule = { names: string[]; action: string; errnoRet?: number };
    const rule = (runtime: "runc" | "runsc") => (seccompProfile(runtime) as { syscalls: Rule[] }).syscalls.find((s) => s.names.includes("clone3"));
    expect(rule("runc")).toMatchObject({ action: "SCMP_ACT_ERRNO", errnoRet: 38 });
    expect(rule("runsc")).toMatchObject({ action: "SCMP_ACT_ALLOW" });
    const unshare = (seccompProfile("runsc") as { syscalls: Rule[] }).syscalls.some((s) => s.action === "SCMP_ACT_ALLOW" && s.names.includes("unshare"));
    expect(unshare).toBe(false);
  });
});

describe("capped output", () => {
  it("keeps the first bytes, drains the rest and says so", () => {
    const o = new CappedOutput(10);
    o.push("stdout", Buffer.from("12345"));
    o.push("stderr", Buffer.from("abc"));
    o.push("stdout", Buffer.from("6789"));
    o.push("stdout", Buffer.from("more"));
    expect(o.text("stdout")).toBe("1234567");
    expect(o.text("stderr")).toBe("abc");
    expect(o.truncated).toBe(true);
  });

  it("is not truncated when everything fits", () => {
    const o = new CappedOutput(10);
    o.push("stdout", Buffer.from("0123456789"));
    expect(o.truncated).toBe(false);
  });
});

describe("instance label", () => {
  it("names the owning daemon on every sandbox's labels, so its reaper never touches another daemon's sandboxes", () => {
    expect(sandboxLabels("r1", "verifier", "0123456789abcdef")).toMatchObject({ [RUN_LABEL]: "r1", [INSTANCE_LABEL]: "0123456789abcdef" });
    expect(sandboxLabels("r1", "verifier")).not.toHaveProperty(INSTANCE_LABEL);
    expect(resolveSandboxConfig({ instance: "0123456789abcdef" }).instance).toBe("0123456789abcdef");
    expect(() => resolveSandboxConfig({ instance: "../x" })).toThrow(/instance/);
    // the label is not HostConfig: the isolation report's key stays the same
    expect(hostConfigHash(resolveSandboxConfig({ instance: "0123456789abcdef" }))).toBe(hostConfigHash(resolveSandboxConfig({})));
  });
});
