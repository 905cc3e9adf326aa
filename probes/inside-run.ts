import crypto from "node:crypto";
import path from "node:path";
import type Docker from "dockerode";
import type { DependencyLayerRef } from "../daemon/src/contracts/sandbox.js";
import type { SandboxConfig } from "../daemon/src/sandbox/config.js";
import type { DockerExecutor } from "../daemon/src/sandbox/docker-executor.js";
import { IN_IMAGE } from "../daemon/src/sandbox/host-config.js";
import type { SandboxContainer } from "../daemon/src/sandbox/sandbox-container.js";
import { type ExtraMount, inspectProbes } from "./host-probes.js";
import { insideProbeArgv } from "./inside-args.js";
import { type HandOver, observeHandOver } from "./pool-probe.js";
import { InsideOutput, type ProbeResult } from "./types.js";

export const CANARY_ENV = "MINI_AGENT_PROBE_CANARY";

/** What every run of the in-container probe is told: the nonce, the canary and where the host keeps its state. */
export interface InsideRun {
  nonce: string;
  ws: string;
  ctl?: string;
  canary: string;
  canaryFileName: string;
  stateDir: string;
}

export function p(id: string, property: string, expected: unknown, observed: unknown, passed: boolean, dnp: string): ProbeResult {
  return { id, property, expected, observed, passed, does_not_prove: dnp };
}

/** The in-container probe's argv for a sandbox of `config` and the image `digest` (the env names it may hold included). */
export async function insideArgv(config: SandboxConfig, docker: Docker, digest: string, o: InsideRun): Promise<string[]> {
  // the pinned image's own ENV (a family's PYTHON*/GO* settings) is part of what the digest pins, not the host's
  const imageEnv = ((await docker.getImage(digest).inspect()).Config?.Env ?? []).map((e) => e.split("=", 1)[0]!);
  const allowedEnv = [...new Set(["HOSTNAME", ...Object.keys(config.baseEnv), ...config.envAllowlist, ...imageEnv])];
  return insideProbeArgv(IN_IMAGE.probe, {
    nonce: o.nonce,
    runtime: config.runtime,
    allowedEnv,
    canarySha256: crypto.createHash("sha256").update(o.canary).digest("hex"),
    canaryName: CANARY_ENV,
    canaryFileName: o.canaryFileName,
    hostStateDir: path.resolve(o.stateDir),
    tmpNoexec: !config.tmpExec,
  });
}

/** `inside_report` and, when the output is bound to the nonce, the probe's own results. */
export function insideResults(res: { stdout: string; stderr: string; exit_code: number | null }, nonce: string): ProbeResult[] {
  const lines = res.stdout.trim().split("\n");
  let parsed: ReturnType<typeof InsideOutput.safeParse> | null = null;
  try {
    parsed = InsideOutput.safeParse(JSON.parse(lines[lines.length - 1] ?? ""));
  } catch {
    parsed = null;
  }
  const bound = parsed?.success === true && parsed.data.nonce === nonce;
  const out: ProbeResult[] = [
    p(
      "inside_report",
      "the in-container probe ran and its output is bound to this run's nonce",
      nonce,
      { exit_code: res.exit_code, nonce_matched: bound, stderr: res.stderr.slice(0, 500) },
      bound && res.exit_code === 0,
      "that the self-report is honest: code in the same container could forge it, hence a fresh container before candidate code and host checks as authority",
    ),
  ];
  if (bound && parsed?.success) out.push(...parsed.data.probes);
  return out;
}

export interface InsideOptions {
  /** dependency layers mounted in the probe's sandbox (a layer-mounted test sandbox: layer-probes.ts) */
  layers?: readonly DependencyLayerRef[];
  /** the mounts the host inspection expects beyond the workspace (and control) volumes */
  extra?: readonly ExtraMount[];
}

/**
 * The in-container probe in a FRESH sandbox made by the executor's runFresh (the
 * candidate code path), while the host inspects that very container.
 */
export async function insideProbes(
  executor: DockerExecutor,
  docker: Docker,
  digest: string,
  o: InsideRun,
  opts: InsideOptions = {},
): Promise<{ results: ProbeResult[]; handOver: HandOver | null }> {
  const argv = await insideArgv(executor.config, docker, digest, o);
  let host: ProbeResult[] = [];
  let handOver: Omit<HandOver, "verdicts"> | null = null;
  const runId = `probe-${o.nonce.slice(0, 12)}-inside`;
  const res = await executor.runFresh(
    {
      runId,
      purpose: "probe",
      argv,
      workspaceDir: o.ws,
      ...(o.ctl !== undefined && { controlDir: o.ctl }),
      ...(opts.layers && { exportSpec: { forbidden: [], include: [], layers: [...opts.layers] } }),
      timeoutMs: 120_000,
      env: { MINI_AGENT_NONCE: o.nonce },
    },
    {
      beforeContent: async (box: SandboxContainer, pooled: boolean) => {
        handOver = await observeHandOver(box, pooled);
      },
      onStarted: async (box: SandboxContainer) => {
        const info = (await box.inspect()) as Parameters<typeof inspectProbes>[0];
        const vols = await Promise.all((info.Mounts ?? []).flatMap((m) => (m.Name ? [docker.getVolume(m.Name).inspect()] : [])));
        host = inspectProbes(info, executor.config, digest, vols, opts.extra);
      },
    },
  );
  const results = [...host, ...insideResults(res, o.nonce)];
  const seen = handOver as Omit<HandOver, "verdicts"> | null;
  return { results, handOver: seen && { ...seen, verdicts: Object.fromEntries(results.map((r) => [r.id, r.passed])) } };
}
