import { spawnSync } from "node:child_process";
import fs from "node:fs";
import type Docker from "dockerode";
import type { SandboxConfig } from "../daemon/src/sandbox/config.js";
import { hostConfigTemplate, IN_IMAGE, SANDBOX_USER, tmpfsVolumeOptions } from "../daemon/src/sandbox/host-config.js";
import type { ProbeResult } from "./types.js";
import { labelFilter, RUN_LABEL } from "../daemon/src/sandbox/labels.js";

type Inspect = Docker.ContainerInspectInfo & { HostConfig: Record<string, unknown> };

function probe(id: string, property: string, expected: unknown, observed: unknown, passed: boolean, doesNotProve: string): ProbeResult {
  return { id, property, expected, observed, passed, does_not_prove: doesNotProve };
}

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
const emptyish = (v: unknown) => v === null || v === undefined || (Array.isArray(v) && v.length === 0);

/** A mount a sandbox kind adds to the workspace (and control) volumes: where, what, and whether it is writable. */
export interface ExtraMount {
  destination: string;
  type: "volume" | "bind";
  rw: boolean;
}

/** A mount of the container as the engine reports it matches an expected one (read-only ones must be read-only). */
function matches(m: { Type?: string; Destination?: string; RW?: boolean }, x: ExtraMount): boolean {
  return m.Type === x.type && m.Destination === x.destination && m.RW === x.rw;
}

/**
 * The authority: what the engine says the container IS, compared field by
 * field with what was requested (image, user, read-only root, no network,
 * CapDrop ALL, no CapAdd, not privileged, no-new-privileges, our seccomp
 * profile and never unconfined, limits, no binds, only our volumes, restart no).
 * `extra`: the mounts this sandbox kind adds (a dependency layer's, the install
 * sandbox's); none of another kind is accepted, and each must be there.
 */
export function inspectProbes(
  info: Inspect,
  config: SandboxConfig,
  digest: string,
  volumes: Docker.VolumeInspectInfo[],
  extra: readonly ExtraMount[] = [],
): ProbeResult[] {
  const want = hostConfigTemplate(config);
  const hc = info.HostConfig;
  const mounts = info.Mounts ?? [];
  const own = (m: (typeof mounts)[number]) =>
    m.Type === "volume" && m.RW === true && ([IN_IMAGE.workspace, IN_IMAGE.control] as string[]).includes(m.Destination);
  const volumeOf = (m: (typeof mounts)[number]) => volumes.find((v) => v.Name === m.Name);
  const workspace = mounts.find((m) => m.Destination === IN_IMAGE.workspace);
  const checks: Record<string, boolean> = {
    user: info.Config.User === SANDBOX_USER,
    network_none: hc.NetworkMode === "none" && Object.keys(info.NetworkSettings?.Networks ?? {}).every((n) => n === "none"),
    readonly_rootfs: hc.ReadonlyRootfs === true,
    not_privileged: hc.Privileged === false,
    cap_drop_all: same(hc.CapDrop, ["ALL"]),
    no_cap_add: emptyish(hc.CapAdd),
    security_opt: same(hc.SecurityOpt, want.SecurityOpt),
    never_unconfined: !((hc.SecurityOpt as string[] | null) ?? []).some((o) => /unconfined/.test(o)),
    pids_limit: hc.PidsLimit === config.pidsLimit,
    memory_no_swap: hc.Memory === config.memoryBytes && hc.MemorySwap === config.memoryBytes,
    cpu: hc.NanoCpus === config.nanoCpus,
    ipc_none: hc.IpcMode === "none",
    readonly_paths: same(hc.ReadonlyPaths, want.ReadonlyPaths),
    tmpfs_tmp: same(hc.Tmpfs, want.Tmpfs),
    init: hc.Init === true,
    no_binds: emptyish(hc.Binds),
    restart_no: (hc.RestartPolicy as { Name?: string } | undefined)?.Name === "no",
    runtime: hc.Runtime === config.runtime,
    only_our_volumes:
      mounts.every((m) => own(m) || extra.some((x) => matches(m, x))) &&
      extra.every((x) => mounts.filter((m) => matches(m, x)).length === 1) &&
      workspace !== undefined,
    // every writable volume is a size-capped tmpfs (a read-only layer cannot grow), and what a layer
    // or an install adds never changes the workspace's own limit
    volumes_size_capped:
      mounts
        .filter((m) => m.Type === "volume" && m.RW)
        .every((m) => volumeOf(m)?.Options?.type === "tmpfs" && /(^|,)size=\d+/.test(volumeOf(m)?.Options?.o ?? "")) &&
      workspace !== undefined &&
      volumeOf(workspace)?.Options?.o === tmpfsVolumeOptions(config.workspaceBytes, "sandbox").o,
  };
  const failed = Object.entries(checks)
    .filter(([, ok]) => !ok)
    .map(([k]) => k);
  return [
    probe(
      "host_inspect",
      "docker inspect shows exactly the requested configuration",
      "every check true",
      { checks, failed },
      failed.length === 0,
      "what a process inside can do within that configuration (see the inside probes)",
    ),
    probe(
      "image_digest",
      "the running image ID equals the pinned digest",
      digest,
      info.Image,
      info.Image === digest,
      "that the pinned image was built from trusted inputs",
    ),
  ];
}

/** runsc must be registered with --network=none (its own netstack is otherwise on). */
export function runtimeRegistrationProbe(info: Record<string, unknown>, runtime: string): ProbeResult {
  const runtimes = (info.Runtimes ?? {}) as Record<string, { path?: string; runtimeArgs?: string[] }>;
  const entry = runtimes[runtime] ?? null;
  const ok = entry !== null && (runtime !== "runsc" || (entry.runtimeArgs ?? []).includes("--network=none"));
  return probe(
    "runtime_registration",
    "the configured runtime is registered with the engine (runsc with --network=none)",
    runtime === "runsc" ? "runsc with --network=none" : "runc",
    entry,
    ok,
    "the runtime's own correctness",
  );
}

/** Host processes still in a container's cgroup: the kernel's view, not the engine's. */
export function hostProcessesOf(containerIds: string[]): number[] {
  if (containerIds.length === 0) return [];
  const found: number[] = [];
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    let cg = "";
    try {
      cg = fs.readFileSync(`/proc/${name}/cgroup`, "utf8");
    } catch {
      continue;
    }
    if (containerIds.some((id) => cg.includes(id))) found.push(Number(name));
  }
  return found;
}

export async function leftovers(docker: Docker, runId: string, containerIds: string[]): Promise<{ containers: number; volumes: number; processes: number[] }> {
  const label = [labelFilter(RUN_LABEL, runId)];
  const containers = (await docker.listContainers({ all: true, filters: { label } })).length;
  const volumes = ((await docker.listVolumes({ filters: { label } })).Volumes ?? []).length;
  return { containers, volumes, processes: hostProcessesOf(containerIds) };
}

/** The daemon side still works after a fork bomb: a host process can be started. */
export function hostCanSpawn(): boolean {
  return spawnSync(process.execPath, ["-e", "0"], { timeout: 10_000 }).status === 0;
}
