import fs from "node:fs";
import type Docker from "dockerode";
import tarStream from "tar-stream";
import { IN_IMAGE } from "../daemon/src/sandbox/host-config.js";
import { POOL_LABEL, PURPOSE_LABEL, RUN_LABEL, SANDBOX_LABEL } from "../daemon/src/sandbox/labels.js";
import type { SandboxContainer } from "../daemon/src/sandbox/sandbox-container.js";
import type { ProbeResult } from "./types.js";

/**
 * What one sandbox looked like when it was handed to a run, before anything was
 * put in it, all seen from the host: the engine's inspect with what is per
 * container or per run taken out, the processes (`docker top`), what /workspace
 * holds (the engine reads the volume), and what /tmp holds where the host can
 * see it (runc: through the init's /proc/PID/root; under gVisor /tmp lives in
 * the sandbox's own kernel, so only the inside probe sees it).
 */
export interface HandOver {
  pooled: boolean;
  shape: unknown;
  processes: string[];
  workspace: string[];
  tmp: string[] | null;
  /** the inside and host probe results of the command then run in it: id -> passed */
  verdicts: Record<string, boolean>;
}

/** per-run and bookkeeping labels: a pooled sandbox differs there by design */
const RUN_LABELS = [RUN_LABEL, PURPOSE_LABEL, SANDBOX_LABEL, POOL_LABEL];

function withoutRunLabels(labels: Record<string, string> | null | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(labels ?? {}).filter(([k]) => !RUN_LABELS.includes(k)));
}

/**
 * The inspect of a container minus what differs between any two containers made
 * from the same spec (ids, names, times, paths, pids, engine-chosen volume names)
 * and the run labels. Everything else, HostConfig included, must be equal.
 */
export function sandboxShape(info: Docker.ContainerInspectInfo): unknown {
  const i = structuredClone(info) as unknown as Record<string, unknown> & {
    Config: Record<string, unknown>;
    HostConfig: Record<string, unknown> & { Mounts?: Array<{ VolumeOptions?: { Labels?: Record<string, string> } }> };
    Mounts?: Array<Record<string, unknown>>;
    NetworkSettings?: { Networks?: Record<string, unknown> };
    State?: Record<string, unknown>;
  };
  for (const k of ["Id", "Created", "Name", "ResolvConfPath", "HostnamePath", "HostsPath", "LogPath", "GraphDriver", "SizeRw", "SizeRootFs"]) delete i[k];
  i.Config.Labels = withoutRunLabels(i.Config.Labels as Record<string, string>);
  for (const m of i.HostConfig.Mounts ?? []) if (m.VolumeOptions) m.VolumeOptions.Labels = withoutRunLabels(m.VolumeOptions.Labels);
  // the engine lists mounts in no fixed order
  i.Mounts = (i.Mounts ?? []).map(({ Name: _n, Source: _s, ...rest }) => rest).sort((a, b) => String(a.Destination).localeCompare(String(b.Destination)));
  // the networks it is on, not the engine's ids for them
  i.NetworkSettings = { Networks: Object.fromEntries(Object.keys(i.NetworkSettings?.Networks ?? {}).map((n) => [n, true])) };
  // running, not OOM-killed, never restarted: not when or as which pid
  i.State = { Status: i.State?.Status, Running: i.State?.Running, OOMKilled: i.State?.OOMKilled, Restarting: i.State?.Restarting, Dead: i.State?.Dead };
  return i;
}

async function listTar(stream: NodeJS.ReadableStream): Promise<string[]> {
  const names: string[] = [];
  const extract = tarStream.extract();
  await new Promise<void>((resolve, reject) => {
    extract.on("entry", (h, body, next) => {
      names.push(h.name);
      body.on("end", next);
      body.resume();
    });
    extract.on("finish", resolve);
    extract.on("error", reject);
    stream.on("error", reject);
    stream.pipe(extract);
  });
  // the archive's first entry is the folder itself
  return names.filter((n) => n.replace(/\/$/, "") !== "workspace").sort();
}

/**
 * How long a just-started sandbox may take to show its spawner. Generous: it only
 * bounds a sandbox that never gets there; one that does is read as soon as it shows.
 */
const HANDOVER_SETTLE_MS = 30_000;
const SPAWNER_ARGS = IN_IMAGE.spawner.join(" ");

async function processesOf(box: SandboxContainer, gvisor: boolean): Promise<string[]> {
  const top = (await box.container.top({ ps_args: "-o pid,args" }).catch(() => null)) as { Titles?: string[]; Processes?: string[][] } | null;
  const cmdAt = top?.Titles?.findIndex((t) => t === "COMMAND" || t === "CMD" || t === "ARGS") ?? -1;
  const pidAt = top?.Titles?.indexOf("PID") ?? -1;
  return (top?.Processes ?? []).map((p) => (gvisor ? `pid ${p[pidAt] ?? "?"} (gVisor)` : ((cmdAt >= 0 ? p[cmdAt] : p[p.length - 1]) ?? ""))).sort();
}

/**
 * The spawner is up: under runc its own command line shows (the init's child,
 * forked but not yet exec'd, still shows the init's: two docker-init lines, which
 * a busy host catches often enough to fail a probe run); under gVisor only pids
 * are known, so two of them.
 */
function spawnerShows(processes: string[], gvisor: boolean): boolean {
  return gvisor ? processes.length >= 2 : processes.includes(SPAWNER_ARGS);
}

/** Reads a sandbox as it is handed over (see HandOver); no code runs in it for this. */
export async function observeHandOver(box: SandboxContainer, pooled: boolean): Promise<Omit<HandOver, "verdicts">> {
  const info = await box.inspect();
  // Under gVisor the engine asks `runsc ps` for the sandbox's own pids, then names them with the
  // HOST's ps, which shows the host's processes of those numbers: only the pids mean something there.
  const gvisor = info.HostConfig.Runtime === "runsc";
  // A just-started sandbox may not show its spawner yet (its init forks it a moment after start,
  // gVisor visibly later): read the list until the spawner shows, or for at most HANDOVER_SETTLE_MS,
  // so a fresh sandbox caught mid-start is not reported as a difference. A sandbox whose spawner
  // shows is read at once, so one with MORE processes is never waited on.
  let processes: string[] = [];
  for (const started = Date.now(); ; await new Promise((r) => setTimeout(r, 100))) {
    processes = await processesOf(box, gvisor);
    if (spawnerShows(processes, gvisor) || Date.now() - started > HANDOVER_SETTLE_MS) break;
  }
  const workspace = await listTar((await box.container.getArchive({ path: IN_IMAGE.workspace })) as NodeJS.ReadableStream);
  let tmp: string[] | null = null;
  if (info.HostConfig.Runtime !== "runsc" && typeof info.State?.Pid === "number" && info.State.Pid > 0) {
    try {
      tmp = fs.readdirSync(`/proc/${info.State.Pid}/root/tmp`).sort();
    } catch {
      tmp = null; // not root on this host: only the inside probe sees /tmp
    }
  }
  return { pooled, shape: sandboxShape(info), processes, workspace, tmp };
}

/** Paths where two JSON values differ (at most 20). */
export function differences(a: unknown, b: unknown, at = "", out: string[] = []): string[] {
  if (out.length >= 20) return out;
  if (a !== null && b !== null && typeof a === "object" && typeof b === "object" && Array.isArray(a) === Array.isArray(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) differences((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${at}/${k}`, out);
    return out;
  }
  if (JSON.stringify(a) !== JSON.stringify(b)) out.push(at || "/");
  return out;
}

/**
 * `pooled_indistinguishable`: a sandbox from the pool, handed to a run, is the
 * same as a fresh one: same inspect (HostConfig, user, read-only root, network,
 * mounts, capabilities, seccomp, env, labels but the run's), same processes (the
 * init and the spawner only), an empty /workspace and /tmp, and the same inside
 * and host probe verdicts for the same probe program run in it.
 */
export function pooledProbe(fresh: HandOver, pooled: HandOver): ProbeResult {
  const shape = differences(fresh.shape, pooled.shape);
  const verdicts = differences(fresh.verdicts, pooled.verdicts);
  const processes = JSON.stringify(fresh.processes) === JSON.stringify(pooled.processes) && pooled.processes.length === 2;
  const empty = (h: HandOver) => h.workspace.length === 0 && (h.tmp === null || h.tmp.length === 0);
  const passed =
    pooled.pooled &&
    !fresh.pooled &&
    shape.length === 0 &&
    verdicts.length === 0 &&
    Object.values(pooled.verdicts).every(Boolean) &&
    processes &&
    empty(fresh) &&
    empty(pooled);
  return {
    id: "pooled_indistinguishable",
    property:
      "a sandbox from the pool is handed over exactly as a fresh one: same configuration, only the spawner running, nothing in /workspace or /tmp, same probe verdicts",
    expected: "served by the pool; no difference but the run labels; processes = init + spawner; /workspace and /tmp empty",
    observed: {
      served_by_pool: pooled.pooled,
      inspect_differences: shape,
      verdict_differences: verdicts,
      processes: { fresh: fresh.processes, pooled: pooled.processes },
      workspace: { fresh: fresh.workspace, pooled: pooled.workspace },
      tmp: { fresh: fresh.tmp, pooled: pooled.tmp },
    },
    passed,
    does_not_prove:
      "how long the sandbox waited in the pool (uptime differs by design); under gVisor /tmp is seen only by the inside probe, which runs after the workspace went in",
  };
}
