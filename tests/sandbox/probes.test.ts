import { spawnSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDockerClient } from "../../daemon/src/sandbox/docker-client.js";
import { DockerExecutor } from "../../daemon/src/sandbox/docker-executor.js";
import { IN_IMAGE } from "../../daemon/src/sandbox/host-config.js";
import { insideProbeArgv } from "../../probes/inside-args.js";
import { currentIsolationKey, readLatestPassingReport } from "../../probes/report-store.js";
import { runIsolationProbes } from "../../probes/run.js";
import type { IsolationReport } from "../../probes/types.js";
import { availableRuntimes, docker, freshStateDir, removeWithPrefix, runIdPrefix, workspace } from "./helpers.js";

let state: Awaited<ReturnType<typeof freshStateDir>>;
const runtimes = await availableRuntimes();

beforeAll(async () => {
  state = await freshStateDir();
});
afterAll(async () => {
  await fs.rm(state.stateDir, { recursive: true, force: true });
});

async function ociSeccompRegistered(): Promise<boolean> {
  const info = (await docker.info()) as { Runtimes?: Record<string, { runtimeArgs?: string[] }> };
  return (info.Runtimes?.runsc?.runtimeArgs ?? []).includes("--oci-seccomp");
}

describe.each(runtimes)("isolation probes on %s", (runtime) => {
  let report: IsolationReport;

  beforeAll(async () => {
    const r = await runIsolationProbes({ stateDir: state.stateDir, config: { runtime }, docker, hostEnv: { ...process.env } });
    expect(r.available).toBe(true);
    report = r as IsolationReport;
  }, 240_000);

  it("every listed probe ran and yields the full record shape", () => {
    const ids = report.probes.map((p) => p.id);
    for (const id of [
      "host_inspect",
      "image_digest",
      "inside_report",
      "uid_gid",
      "capabilities",
      "no_new_privs",
      "seccomp_mode",
      "readonly_rootfs",
      "writable_mounts",
      "proc_sys_readonly",
      "network_interfaces",
      "outbound_tcp",
      "dns",
      "docker_socket",
      "env_allowlist",
      "canary_file",
      "pids_limit",
      "memory_limit",
      "sigterm_deadline",
      "cancel_cleanup",
      "runtime",
      "proc_protect",
      "devices",
      "setuid_files",
      "seccomp_syscalls",
      "pid_namespace",
      "spawned_tree",
      "pooled_indistinguishable",
    ]) {
      expect(ids).toContain(id);
    }
    for (const p of report.probes) expect(Object.keys(p).sort()).toEqual(["does_not_prove", "expected", "id", "observed", "passed", "property"]);
  });

  // Regression: the install sandbox and a test sandbox with a dependency layer ran with no probe at all.
  it("proves the layer-mounted test sandbox and (under runc) the install sandbox too: each runs the whole inside probe, and its own checks", () => {
    const ids = report.probes.map((p) => p.id);
    const inside = [
      "host_inspect",
      "inside_report",
      "uid_gid",
      "capabilities",
      "readonly_rootfs",
      "writable_mounts",
      "network_interfaces",
      "outbound_tcp",
      "dns",
      "docker_socket",
      "spawned_tree",
    ];
    for (const id of [...inside, "layer_readonly"]) expect(ids).toContain(`layer_sandbox.${id}`);
    expect(report.probes.find((p) => p.id === "layer_sandbox.layer_readonly")?.passed).toBe(true);
    // gVisor does not let the install sandbox reach its proxy's socket: there is no install sandbox under runsc
    if (runtime === "runsc") {
      expect(ids.filter((id) => id.startsWith("install_sandbox."))).toEqual([]);
      return;
    }
    for (const id of [...inside, "egress_allowed", "egress_refused", "egress_direct"]) expect(ids).toContain(`install_sandbox.${id}`);
    const byId = Object.fromEntries(report.probes.map((p) => [p.id, p]));
    // the install sandbox's own expectations: node_modules and the download caches writable, the proxy's socket the only socket
    expect((byId["install_sandbox.writable_mounts"]!.observed as { user_writable: string[] }).user_writable).toEqual([
      "/opt/mini-agent-install-cache",
      "/tmp",
      "/workspace",
      "/workspace/node_modules",
    ]);
    expect((byId["install_sandbox.docker_socket"]!.observed as { sockets: string[] }).sockets).toEqual(["/opt/mini-agent-egress/proxy.sock"]);
    // the unlisted name was refused and logged, and never reached the dialler
    const refused = byId["install_sandbox.egress_refused"]!.observed as { refusals: string[]; logged: number; dialled: string[] };
    expect(refused.refusals).toEqual(["CONNECT unlisted.invalid:443", "GET unlisted.invalid:80"]);
    expect(refused.logged).toBe(2);
    expect(refused.dialled.some((d) => d.startsWith("unlisted"))).toBe(false);
  });

  // Regression: under gVisor a `docker exec`'d process runs without the container's seccomp filter, so
  // with --oci-seccomp registered every probe (seccomp included) must pass; only without it may the two fail.
  it("passes every probe (on runsc registered with --oci-seccomp too; without that flag only the seccomp ones may fail)", async () => {
    const failed = report.probes.filter((p) => !p.passed).map((p) => p.id);
    const expected = runtime === "runsc" && !(await ociSeccompRegistered()) ? ["seccomp_mode", "seccomp_syscalls"] : [];
    expect(failed, JSON.stringify(report.probes.filter((p) => !p.passed && !expected.includes(p.id)))).toEqual(expected);
    expect(report.passed).toBe(failed.length === 0);
  });

  it("is stored under its key and found by the gate only while the key matches", async () => {
    const key = await currentIsolationKey({ config: { runtime }, lockPath: state.lockPath, docker });
    expect(key).toEqual({
      image_family: "node",
      image_digest: report.image_digest,
      host_config_hash: report.host_config_hash,
      engine_version: report.engine_version,
      runtime,
    });
    const found = await readLatestPassingReport(state.stateDir, key);
    if (report.passed) expect(found?.generated_at).toBe(report.generated_at);
    else expect(found).toBeNull();
    // a different HostConfig is a different key: no report proves it
    const other = await currentIsolationKey({ config: { runtime, memoryBytes: 300 << 20 }, lockPath: state.lockPath, docker });
    expect(other.host_config_hash).not.toBe(key.host_config_hash);
    expect(await readLatestPassingReport(state.stateDir, other)).toBeNull();
  });
});

describe("the process probes can fail", () => {
  it("pid_namespace and spawned_tree fail when a stray process runs and the probe is not the spawner's own child", async () => {
    const prefix = runIdPrefix("probe-neg");
    const ws = await workspace({ "x.txt": "x" });
    try {
      const args = {
        nonce: "n".repeat(32),
        runtime: "runc",
        allowedEnv: [],
        canarySha256: "",
        canaryName: "NONE",
        canaryFileName: "none",
        hostStateDir: "/nonexistent",
        tmpNoexec: true,
      };
      // a wrapper between the spawner and the probe, and a detached sibling that outlives nothing of the probe's
      const wrapper =
        "const c=require('child_process');c.spawn('/usr/bin/node',['-e','setTimeout(()=>{},30000)'],{detached:true,stdio:'ignore'});" +
        "process.exit(c.spawnSync(process.argv[1],process.argv.slice(2),{stdio:'inherit'}).status)";
      const ex = new DockerExecutor({ lockPath: state.lockPath });
      const res = await ex.run({
        runId: `${prefix}-x`,
        purpose: "probe",
        argv: ["node", "-e", wrapper, ...insideProbeArgv(IN_IMAGE.probe, args)],
        workspaceDir: ws,
        timeoutMs: 60_000,
      });
      const lines = res.stdout.trim().split("\n");
      const probes = (JSON.parse(lines[lines.length - 1]!) as { probes: Array<{ id: string; passed: boolean; observed: unknown }> }).probes;
      const pidNs = probes.find((p) => p.id === "pid_namespace")!;
      expect(pidNs.passed).toBe(false);
      // the wrapper and the detached sibling
      expect((pidNs.observed as { unexpected: number[] }).unexpected).toHaveLength(2);
      expect(probes.find((p) => p.id === "spawned_tree")!.passed).toBe(false);
    } finally {
      await removeWithPrefix(prefix);
      await fs.rm(ws, { recursive: true, force: true });
    }
  });
});

describe("the static inside probe can fail", () => {
  it("reports runtime, env_allowlist and canary_file as failed when the sandbox does not match what the host says it must be", async () => {
    const prefix = runIdPrefix("probe-static-neg");
    const ws = await workspace({ "planted-canary": "x" });
    try {
      // a runc sandbox described as runsc; no env name allowed; LANG's value posing as the canary secret;
      // a canary file the probe will find; a "host state dir" that is visible
      const argv = insideProbeArgv(IN_IMAGE.probe, {
        nonce: "m".repeat(32),
        runtime: "runsc",
        allowedEnv: [],
        canarySha256: crypto.createHash("sha256").update("C.UTF-8").digest("hex"),
        canaryName: "NONE",
        canaryFileName: "planted-canary",
        hostStateDir: "/workspace",
        tmpNoexec: true,
      });
      const ex = new DockerExecutor({ lockPath: state.lockPath });
      const res = await ex.run({ runId: `${prefix}-x`, purpose: "probe", argv, workspaceDir: ws, timeoutMs: 60_000 });
      const out = JSON.parse(res.stdout.trim().split("\n").pop()!) as { nonce: string; probes: Array<{ id: string; passed: boolean; observed: unknown }> };
      expect(out.nonce).toBe("m".repeat(32));
      const byId = Object.fromEntries(out.probes.map((p) => [p.id, p]));
      for (const id of ["runtime", "env_allowlist", "canary_file"]) expect(byId[id]?.passed, id).toBe(false);
      expect((byId.env_allowlist!.observed as { canary_seen: boolean }).canary_seen).toBe(true);
      expect((byId.canary_file!.observed as { found: string[] }).found).toEqual(["/workspace/planted-canary"]);
      // the rest of this sandbox is sound: the same run passes the probes that do not depend on those facts
      for (const id of ["uid_gid", "capabilities", "readonly_rootfs", "network_interfaces", "seccomp_syscalls", "spawned_tree"])
        expect(byId[id]?.passed, id).toBe(true);
    } finally {
      await removeWithPrefix(prefix);
      await fs.rm(ws, { recursive: true, force: true });
    }
  });
});

describe("without an engine", () => {
  it("reports runtime_unavailable and never falls back to the host", async () => {
    const r = await runIsolationProbes({ stateDir: state.stateDir, docker: createDockerClient({ DOCKER_HOST: "unix:///nonexistent/docker.sock" }) });
    expect(r).toMatchObject({ available: false, isolation_passed: false, reason: "runtime_unavailable", passed: false });
  });

  it("the CLI exits 2 with the JSON report", () => {
    const res = spawnSync(process.execPath, ["--import", "tsx", "probes/cli.ts", "--json", "--state-dir", state.stateDir], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, DOCKER_HOST: "unix:///nonexistent/docker.sock" },
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(res.status).toBe(2);
    expect(JSON.parse(res.stdout)).toMatchObject({ available: false, reason: "runtime_unavailable" });
  });

  it("the CLI rejects an unknown runtime with a usage error", () => {
    const res = spawnSync(process.execPath, ["--import", "tsx", "probes/cli.ts", "--runtime", "kata"], { encoding: "utf8", timeout: 60_000 });
    expect(res.status).toBe(64);
    expect(res.stderr).toMatch(/runc or runsc/);
  });
});
