import crypto from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import type Docker from "dockerode";
import { statePath } from "../daemon/src/config/state-dir.js";
import { resolveSandboxConfig, type SandboxConfig } from "../daemon/src/sandbox/config.js";
import { createDockerClient } from "../daemon/src/sandbox/docker-client.js";
import { hostConfigHash } from "../daemon/src/sandbox/config-hash.js";
import { engineError } from "../daemon/src/sandbox/image-pin.js";
import { readImageLock } from "../daemon/src/sandbox/image-lock.js";
import { MiniAgentError } from "../daemon/src/errors.js";
import { IsolationReport, type IsolationKey } from "./types.js";

/**
 * What a report proves is tied to this tuple; a change to any part (other family,
 * new image, other HostConfig, engine upgrade, other runtime) needs a new report.
 * Cheap and side-effect free: reads the lock and asks the engine its version;
 * no container is made.
 */
export async function currentIsolationKey(opts: { config?: unknown; lockPath: string; docker?: Docker }): Promise<IsolationKey> {
  const config = resolveSandboxConfig(opts.config ?? {});
  const lock = await readImageLock(opts.lockPath);
  const digest = lock?.images[config.imageFamily]?.digest;
  if (!digest) throw new MiniAgentError("image_missing", `no pinned sandbox image in ${opts.lockPath}; rebuild it with \`npm run image:build\``);
  const docker = opts.docker ?? createDockerClient({});
  let engine: string;
  try {
    engine = (await docker.version()).Version;
  } catch (err) {
    throw engineError(err);
  }
  return isolationKeyFor(config, digest, engine);
}

/** The one formula for the key; the live gate builds it from the same facts after its own engine checks. */
export function isolationKeyFor(config: SandboxConfig, imageDigest: string, engineVersion: string): IsolationKey {
  return {
    image_family: config.imageFamily,
    image_digest: imageDigest,
    host_config_hash: hostConfigHash(config),
    engine_version: engineVersion,
    runtime: config.runtime,
  };
}

export function keyId(key: IsolationKey): string {
  const canon = JSON.stringify([key.image_family, key.image_digest, key.host_config_hash, key.engine_version, key.runtime]);
  return crypto.createHash("sha256").update(canon).digest("hex").slice(0, 32);
}

function reportPath(stateDir: string, key: IsolationKey): string {
  return path.join(statePath(stateDir, "reports"), `${keyId(key)}.json`);
}

/** Stores the report as the latest for its key (atomic replace); a failing run replaces an older pass. */
export async function writeReport(stateDir: string, report: IsolationReport): Promise<string> {
  const file = reportPath(stateDir, {
    image_family: report.image_family,
    image_digest: report.image_digest,
    host_config_hash: report.host_config_hash,
    engine_version: report.engine_version,
    runtime: report.runtime,
  });
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  await fs.writeFile(tmp, JSON.stringify(report, null, 2) + "\n", { mode: 0o600 });
  await fs.rename(tmp, file);
  return file;
}

/** The latest report stored for exactly this key, whatever its verdict, or null. */
export async function readLatestReport(stateDir: string, key: IsolationKey): Promise<IsolationReport | null> {
  let text: string;
  try {
    text = await fs.readFile(reportPath(stateDir, key), "utf8");
  } catch {
    return null;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return null;
  }
  const parsed = IsolationReport.safeParse(json);
  if (!parsed.success) return null;
  const r = parsed.data;
  const same =
    r.image_family === key.image_family &&
    r.image_digest === key.image_digest &&
    r.host_config_hash === key.host_config_hash &&
    r.engine_version === key.engine_version &&
    r.runtime === key.runtime;
  return same ? r : null;
}

/** A pass needs probes, every one passed, and the report saying so. */
export function isPassingReport(r: IsolationReport): boolean {
  return r.passed && r.probes.length > 0 && r.probes.every((p) => p.passed);
}

/**
 * The latest report for exactly this key if it passed, else null. Because a
 * failing run replaces the stored report, an older pass never hides a newer
 * failure. The caller decides freshness from `generated_at`.
 */
export async function readLatestPassingReport(stateDir: string, key: IsolationKey): Promise<IsolationReport | null> {
  const r = await readLatestReport(stateDir, key);
  return r && isPassingReport(r) ? r : null;
}
