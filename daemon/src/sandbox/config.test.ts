import { afterEach, describe, expect, it, vi } from "vitest";
import { isMiniAgentError } from "../errors.js";
import { buildExecEnv, resolveSandboxConfig, SANDBOX_DEFAULTS } from "./config.js";
import { hostConfigHash } from "./config-hash.js";
import { hostConfigTemplate } from "./host-config.js";
import { installMountShape } from "./install-sandbox.js";
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
      installMountShape: (k: string) => (m.installMountShape as (k: string) => Array<Record<string, unknown>>)(k).map((x) => ({ ...x, ReadOnly: false })),
    }));
    expect(npmWritable).not.toBe(base);
    const layerWritable = await hashWith("./host-config.js", (m) => ({
      ...m,
      layerMount: (l: never) => ({ ...(m.layerMount as (l: never) => Record<string, unknown>)(l), ReadOnly: false }),
    }));
    expect(layerWritable).not.toBe(base);
  });

  it("a configuration without an install sandbox (runsc) has no install mounts in its hash", async () => {
    const overrides = { runtime: "runsc" };
    const without = hostConfigHash(resolveSandboxConfig(overrides));
    expect(await hashWith("./install-sandbox.js", (m) => ({ ...m, installKindFor: () => "npm" }), overrides)).not.toBe(without);
  });

  // Regression: the python and go families' install sandboxes (pip, Go) ran unprobed, and their mounts were
  // outside their hash: a changed pip or Go install mount never sent the live gate back to the probes.
  it("each family's hash covers its own kind's install mounts (python: pip's, go: Go's, a custom family: its base's), and no other kind's", async () => {
    const shapeChanged = (changed: string) => (m: Record<string, unknown>) => ({
      ...m,
      installMountShape: (k: string) =>
        (m.installMountShape as (k: string) => Array<Record<string, unknown>>)(k).map((x) => (k === changed ? { ...x, ReadOnly: false } : x)),
    });
    for (const [overrides, kind] of [
      [{ imageFamily: "python" }, "pip"],
      [{ imageFamily: "go" }, "go"],
      [{ imageFamily: "pylint", familyBase: "python" }, "pip"],
    ] as const) {
      const base = hostConfigHash(resolveSandboxConfig(overrides));
      expect(await hashWith("./install-sandbox.js", shapeChanged(kind), overrides), JSON.stringify(overrides)).not.toBe(base);
      // npm's mounts are node's: changing them leaves this family's key alone
      expect(await hashWith("./install-sandbox.js", shapeChanged("npm"), overrides)).toBe(base);
    }
    // node's key is the npm shape's alone
    expect(await hashWith("./install-sandbox.js", shapeChanged("pip"))).toBe(hostConfigHash(resolveSandboxConfig({})));
  });

  // node's isolation reports are keyed by npm's install mounts as they were when npm was the only install probed:
  // the shape is pinned here so that pip and Go joining the hash leaves every node report valid
  it("npm's install mount shape (in node's key) is exactly the one node's reports were keyed by", () => {
    const tmpfs = { type: "tmpfs", device: "tmpfs", o: "size=1073741824,nosuid,nodev,uid=65534,gid=65534,mode=0700" };
    const volume = (Target: string) => ({
      Type: "volume",
      Source: "",
      Target,
      ReadOnly: false,
      VolumeOptions: { NoCopy: true, Labels: {}, DriverConfig: { Name: "local", Options: tmpfs } },
    });
    const bind = (Source: string, Target: string) => ({ Type: "bind", Source, Target, ReadOnly: true });
    expect(installMountShape("npm")).toEqual([
      volume("/workspace/node_modules"),
      volume("/opt/mini-agent-install-cache"),
      bind("<egress socket folder>", "/opt/mini-agent-egress"),
      bind("<install tools folder>", "/opt/mini-agent-install"),
      bind("<host npm>", "/opt/mini-agent-install-npm"),
    ]);
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
