import crypto from "node:crypto";
import fs from "node:fs/promises";
import { GenericContainer, type StartedTestContainer } from "testcontainers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveSandboxConfig } from "../../daemon/src/sandbox/config.js";
import { hostConfigTemplate, IN_IMAGE, SANDBOX_USER } from "../../daemon/src/sandbox/host-config.js";
import { labelFilter, RUN_LABEL, sandboxLabels } from "../../daemon/src/sandbox/labels.js";
import { inspectProbes } from "../../probes/host-probes.js";
import { insideProbeArgv } from "../../probes/inside-args.js";
import type { ProbeResult } from "../../probes/types.js";
import { availableRuntimes, docker, freshStateDir, runIdPrefix } from "./helpers.js";

// Ryuk cannot be pulled here (no registry): this suite removes its own container.
process.env.TESTCONTAINERS_RYUK_DISABLED = "true";

/** The pinned image started by Testcontainers with exactly the executor's HostConfig template. */
class PinnedSandbox extends GenericContainer {
  constructor(tag: string, runtime: "runc" | "runsc", runId: string) {
    super(tag);
    const tmpl = hostConfigTemplate(resolveSandboxConfig({ runtime }));
    Object.assign(this.hostConfig, tmpl);
    // Testcontainers sets its own network mode at start: ask for none explicitly
    this.withNetworkMode("none")
      .withUser(SANDBOX_USER)
      .withCommand([...IN_IMAGE.spawner])
      .withLabels(sandboxLabels(runId, "probe"))
      .withPullPolicy({ shouldPull: () => false });
  }
}

let state: Awaited<ReturnType<typeof freshStateDir>>;
const runtimes = await availableRuntimes();
const info = (await docker.info()) as { Runtimes?: Record<string, { runtimeArgs?: string[] }> };
// gVisor applies the container's seccomp profile only when registered with --oci-seccomp
const runscSeccomp = (info.Runtimes?.runsc?.runtimeArgs ?? []).includes("--oci-seccomp");
beforeAll(async () => {
  state = await freshStateDir();
});
afterAll(async () => {
  await fs.rm(state.stateDir, { recursive: true, force: true });
});

describe.each(runtimes)("the pinned image under Testcontainers on %s", (runtime) => {
  const prefix = runIdPrefix(`tc-${runtime}`);
  let started: StartedTestContainer | undefined;
  let probes: ProbeResult[] = [];

  beforeAll(async () => {
    started = await new PinnedSandbox(state.tag, runtime, prefix).start();
    const args = {
      nonce: crypto.randomBytes(8).toString("hex"),
      runtime,
      allowedEnv: ["HOSTNAME", "PATH", "HOME", "LANG"],
      canarySha256: "0".repeat(64),
      canaryName: "NOT_SET",
      canaryFileName: "no-such-canary",
      hostStateDir: state.stateDir,
      tmpNoexec: true,
    };
    // through the relay, as the executor does: the probe must run in the spawner's (seccomp-filtered) tree
    // (no workspace volume here, and the image's own /workspace is root's: start in /)
    const res = await started.exec([...IN_IMAGE.relay, ...insideProbeArgv(IN_IMAGE.probe, args)], { user: SANDBOX_USER, workingDir: "/" });
    const parsed = JSON.parse(res.stdout.trim().split("\n").pop()!);
    expect(parsed.nonce).toBe(args.nonce);
    probes = parsed.probes;
  }, 120_000);

  afterAll(async () => {
    await started?.stop({ remove: true, removeVolumes: true, timeout: 0 });
    const left = await docker.listContainers({ all: true, filters: { label: [labelFilter(RUN_LABEL, prefix)] } });
    expect(left).toHaveLength(0);
  });

  const byId = (id: string) => probes.find((p) => p.id === id);

  it.each([
    "uid_gid",
    "capabilities",
    "no_new_privs",
    "seccomp_mode",
    "readonly_rootfs",
    "proc_sys_readonly",
    "proc_protect",
    "network_interfaces",
    "outbound_tcp",
    "dns",
    "docker_socket",
    "env_allowlist",
    "canary_file",
    "pid_namespace",
    "runtime",
    "devices",
    "setuid_files",
    "seccomp_syscalls",
    "spawned_tree",
  ])("inside: %s holds", (id) => {
    const p = byId(id);
    expect(p, `probe ${id} ran`).toBeDefined();
    const seccompUnenforced = runtime === "runsc" && !runscSeccomp && (id === "seccomp_mode" || id === "seccomp_syscalls");
    expect(p!.passed, JSON.stringify(p!.observed)).toBe(!seccompUnenforced);
  });

  it("outside: the engine reports the requested configuration and the pinned image", async () => {
    const info = await docker.getContainer(started!.getId()).inspect();
    const [hostInspect, digest] = inspectProbes(info as never, resolveSandboxConfig({ runtime }), state.digest, []);
    // Testcontainers adds no volumes here; every other check must hold
    const failed = (hostInspect!.observed as { failed: string[] }).failed.filter((f) => f !== "only_our_volumes" && f !== "volumes_size_capped");
    expect(failed).toEqual([]);
    expect(digest!.passed).toBe(true);
  });
});
