import type Docker from "dockerode";
import type { DependencyLayerRef } from "../contracts/sandbox.js";
import type { SandboxConfig } from "./config.js";
import { seccompProfile } from "./seccomp-profile.js";

/** Paths baked into the image by sandbox-image/ (there is no shell to run anything else). */
export const IN_IMAGE = {
  /**
   * The container's main process (under the init): every command is its child, so it
   * runs in the init process tree, which is the tree gVisor's --oci-seccomp filters
   * (a `docker exec`'d process is not). See sandbox-image/helper/spawner.c.
   */
  spawner: ["/opt/mini-agent/spawner"],
  /**
   * For a plain `docker exec` (e.g. a Testcontainers container): hands argv/env/fds to the
   * spawner and exits with the command's status. The daemon itself sends commands over
   * the attach channel instead (attach-channel.ts).
   */
  relay: ["/opt/mini-agent/run", "--"],
  /** warm sandbox between two commands: kill leftovers, empty /tmp and /workspace (via the spawner). */
  clear: ["/opt/mini-agent/run", "--clear"],
  /** after a command: kill leftovers, empty /tmp; keep /workspace if unchanged, else empty it (exit 3). */
  settle: ["/opt/mini-agent/run", "--settle"],
  /** `run --read-report PATH MAXBYTES`: a report file's bytes on stdout (sandbox/report-read.ts); no command runs. */
  readReport: ["/opt/mini-agent/run", "--read-report"],
  /** `run --changed MAXPATHS`: what the last command changed under /workspace (sandbox/changed-list.ts), before settle. */
  changed: ["/opt/mini-agent/run", "--changed"],
  /** static (probes/inside/probe.c): runs in every image family, needs nothing from it. */
  probe: ["/opt/mini-agent/probe"],
  /** static: the syscall list, and the fork bomb, memory hog and SIGTERM-ignoring process of the resource probes. */
  syscallHelper: "/opt/mini-agent/syscall-probe",
  workspace: "/workspace",
  control: "/control",
} as const;

export const SANDBOX_USER = "65534:65534";

/**
 * The HostConfig every sandbox gets, without the per-container volume names.
 * This template is what the isolation report's HostConfig hash covers (config-hash.ts), so
 * probes, candidates, verifier and bench all prove and use the same thing.
 */
export function hostConfigTemplate(config: SandboxConfig): Record<string, unknown> {
  return {
    NetworkMode: "none",
    ReadonlyRootfs: true,
    Privileged: false,
    CapDrop: ["ALL"],
    CapAdd: null,
    // our own allowlist profile (stricter than the engine default, see seccomp-profile.ts); never "unconfined".
    SecurityOpt: ["no-new-privileges", `seccomp=${JSON.stringify(seccompProfile(config.runtime))}`],
    PidsLimit: config.pidsLimit,
    Memory: config.memoryBytes,
    // equal to Memory: no swap
    MemorySwap: config.memoryBytes,
    NanoCpus: config.nanoCpus,
    // /dev/shm would stay writable under a read-only root; no IPC namespace mounts at all.
    IpcMode: "none",
    // an IPC namespace still gets a writable /dev/mqueue; make it read-only. Setting this list
    // replaces the engine's defaults, so they are repeated first.
    ReadonlyPaths: ["/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger", "/dev/mqueue"],
    // exec only for a family that runs what it builds in /tmp (families.ts); the engine's default is noexec
    Tmpfs: { "/tmp": `rw,nosuid,nodev,${config.tmpExec ? "exec" : "noexec"},size=${config.tmpfsBytes},mode=1777` },
    // PID 1 ignores signals without a handler; an init forwards them and reaps orphans.
    Init: true,
    Binds: null,
    RestartPolicy: { Name: "no", MaximumRetryCount: 0 },
    AutoRemove: false,
    Runtime: config.runtime,
    LogConfig: { Type: "none", Config: {} },
    Ulimits: [{ Name: "core", Soft: 0, Hard: 0 }],
  };
}

/** Size-capped tmpfs: a candidate filling /workspace cannot eat host disk. */
export function tmpfsVolumeOptions(bytes: number, owner: "sandbox" | "root"): Record<string, string> {
  const ids = owner === "sandbox" ? "uid=65534,gid=65534,mode=0700" : "uid=0,gid=0,mode=0555";
  return { type: "tmpfs", device: "tmpfs", o: `size=${bytes},nosuid,nodev,${ids}` };
}

/**
 * The sandbox's own volumes: /workspace (the sandbox user's) and, for
 * acceptance runs, /control (root's, no write bits). Anonymous volumes made
 * with the container and removed with it (`remove({ v: true })`), carrying
 * the sandbox's labels so the reaper finds any the engine failed to remove.
 * Volumes, not HostConfig.Tmpfs: the engine uploads (putArchive) into
 * volumes, never into a tmpfs under a read-only root.
 */
export function sandboxMounts(
  config: SandboxConfig,
  labels: Record<string, string>,
  withControl: boolean,
  layers: readonly DependencyLayerRef[] = [],
): Docker.MountSettings[] {
  const volume = (target: string, options: Record<string, string>): Docker.MountSettings => ({
    Type: "volume",
    // no name: an anonymous volume, named by the engine and removed with the container
    Source: "",
    Target: target,
    ReadOnly: false,
    // NoCopy: nothing of the image is copied into the volume; it starts empty
    VolumeOptions: { NoCopy: true, Labels: labels, DriverConfig: { Name: "local", Options: options } },
  });
  const mounts = [volume(IN_IMAGE.workspace, tmpfsVolumeOptions(config.workspaceBytes, "sandbox"))];
  if (withControl) mounts.push(volume(IN_IMAGE.control, tmpfsVolumeOptions(config.controlBytes, "root")));
  // dependency layers: built once, mounted READ-ONLY at their folder inside the workspace (after /workspace:
  // the engine mounts by path depth), never copied, never counted against the workspace tmpfs
  for (const l of layers) mounts.push(layerMount(l));
  return mounts;
}

/** A dependency layer's mount: its volume, read-only, at its folder in the workspace. */
export function layerMount(l: Pick<DependencyLayerRef, "folder" | "volume">): Docker.MountSettings {
  return {
    Type: "volume",
    Source: l.volume,
    Target: layerTarget(l),
    ReadOnly: true,
    VolumeOptions: { NoCopy: true } as Docker.MountSettings["VolumeOptions"],
  };
}

/** Where a dependency layer is mounted in a sandbox. */
export function layerTarget(l: Pick<DependencyLayerRef, "folder">): string {
  return `${IN_IMAGE.workspace}/${l.folder}`;
}

export function containerSpec(
  config: SandboxConfig,
  digest: string,
  labels: Record<string, string>,
  withControl: boolean,
  layers: readonly DependencyLayerRef[] = [],
): Docker.ContainerCreateOptions {
  return {
    Image: digest,
    Cmd: [...IN_IMAGE.spawner],
    User: SANDBOX_USER,
    WorkingDir: IN_IMAGE.workspace,
    Env: Object.entries(config.baseEnv).map(([k, v]) => `${k}=${v}`),
    Labels: labels,
    NetworkDisabled: true,
    Hostname: "sandbox",
    // commands go to the spawner's stdin over one attach (attach-channel.ts): no exec per command
    OpenStdin: true,
    AttachStdin: true,
    StdinOnce: false,
    AttachStdout: false,
    AttachStderr: false,
    Tty: false,
    HostConfig: { ...(hostConfigTemplate(config) as Docker.HostConfig), Mounts: sandboxMounts(config, labels, withControl, layers) },
  };
}
