import fs from "node:fs/promises";
import path from "node:path";
import type { EngineFacts, Json } from "./types.js";

/**
 * What the report ran on. Split in two on purpose:
 *  - `canonical`: facts fixed by the installation (Node version, OS family,
 *    backend, runtime, dependency versions as installed). They are part of
 *    offline-canonical.json, so its hash says "these results on this stack";
 *  - `volatile`: facts that may differ between two runs on the same machine or
 *    are not content-defined (engine version, image digest, CPU count). They go
 *    to the group files and environment.json only.
 */
export interface EnvironmentFacts {
  canonical: { [k: string]: Json };
  volatile: { [k: string]: Json };
}

export interface EnvironmentInput {
  repoRoot: string;
  nodeVersion: string;
  platform: string;
  cpus: number;
  backend: "container" | "trusted_local";
  engine: EngineFacts;
}

async function installedVersion(repoRoot: string, name: string): Promise<string | null> {
  try {
    const pkg = JSON.parse(await fs.readFile(path.join(repoRoot, "node_modules", name, "package.json"), "utf8")) as { version?: unknown };
    return typeof pkg.version === "string" ? pkg.version : null;
  } catch {
    return null;
  }
}

export async function collectEnvironment(input: EnvironmentInput): Promise<EnvironmentFacts> {
  const pkg = JSON.parse(await fs.readFile(path.join(input.repoRoot, "package.json"), "utf8")) as {
    dependencies?: Record<string, string>;
    devDependencies?: Record<string, string>;
  };
  const names = [...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.devDependencies ?? {})].sort();
  const dependencies: { [k: string]: Json } = {};
  for (const name of names) dependencies[name] = await installedVersion(input.repoRoot, name);
  return {
    canonical: {
      node: input.nodeVersion,
      os_family: input.platform,
      backend: input.backend,
      runtime: input.engine.runtime,
      dependencies,
    },
    volatile: {
      engine_available: input.engine.available,
      engine_version: input.engine.engine_version,
      image_digest: input.engine.image_digest,
      cpus: input.cpus,
    },
  };
}
