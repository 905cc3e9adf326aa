import type { DependencyLayerInfo, EnvBuildBody, EnvLayersBody } from "../contracts/api-responses.js";
import type { EnvBuildRequest } from "./env-build.js";
import { TERMINAL_STATUSES, type RunStatus } from "../contracts/run.js";
import type { RunRecord } from "../store/records.js";

/** What `env list|gc` needs of the layer store (sandbox/dependency-layer.ts DependencyLayers). */
export interface LayerStorePort {
  list(): Promise<
    Array<{ key: string; folder: string; volume: string; size_bytes: number; files: number; built_at: string; last_used_at: string; present: boolean }>
  >;
  remove(key: string): Promise<void>;
}

export interface EnvService {
  list(): Promise<EnvLayersBody>;
  /** removes the layers last used before `now - olderThanMs` that no resumable run names; `dryRun` only says which */
  gc(opts: { olderThanMs: number; dryRun: boolean }): Promise<EnvLayersBody>;
  /** `env build`: an install in an install sandbox becomes the workspace's layer (env-build.ts); absent: no install sandbox */
  build?: (req: EnvBuildRequest) => Promise<EnvBuildBody>;
}

/**
 * `mini-agent-client env list|gc`: the dependency layers with the runs that
 * use them. The garbage-collection rule the user sees: a layer goes when it
 * was last used longer ago than `--older-than` (default: any time) AND no
 * resumable run names it (a run that may still start a sandbox keeps its
 * layer, whatever its age); a volume the engine no longer has is forgotten.
 */
export function createEnvService(deps: {
  layers: LayerStorePort;
  runs: () => Array<{ run_id: string; status: RunStatus; record: Pick<RunRecord, "dependency_layers"> }>;
  now: () => number;
  build?: (req: EnvBuildRequest) => Promise<EnvBuildBody>;
}): EnvService {
  const infos = async (): Promise<DependencyLayerInfo[]> => {
    const runs = deps.runs();
    return (await deps.layers.list()).map((l) => {
      const using = runs.filter((r) => r.record.dependency_layers?.some((d) => d.key === l.key));
      return {
        key: l.key,
        folder: l.folder,
        volume: l.volume,
        size_bytes: l.size_bytes,
        files: l.files,
        built_at: l.built_at,
        last_used_at: l.last_used_at,
        runs: using.map((r) => r.run_id),
        resumable_runs: using.filter((r) => !TERMINAL_STATUSES.includes(r.status)).map((r) => r.run_id),
        present: l.present,
      };
    });
  };
  return {
    ...(deps.build && { build: deps.build }),
    async list() {
      return { kind: "env_layers", layers: await infos() };
    },
    async gc({ olderThanMs, dryRun }) {
      const cutoff = deps.now() - olderThanMs;
      const all = await infos();
      const doomed = all.filter((l) => l.resumable_runs.length === 0 && (!l.present || Date.parse(l.last_used_at) <= cutoff));
      const removed: string[] = [];
      if (!dryRun) {
        for (const l of doomed) {
          await deps.layers.remove(l.key);
          removed.push(l.key);
        }
      }
      const left = dryRun ? all : all.filter((l) => !removed.includes(l.key));
      return { kind: "env_layers", layers: left, removed: dryRun ? doomed.map((l) => l.key) : removed, dry_run: dryRun };
    },
  };
}
