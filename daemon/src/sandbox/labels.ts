import type { SandboxRunRequest } from "../contracts/sandbox.js";

/**
 * Every Docker label mini-agent puts on (or looks for on) containers and
 * volumes, named once. The reaper, the leftover checks, the probes and the
 * tests filter by these; a second spelling anywhere would make one of them
 * miss what another made.
 */

/** on everything mini-agent creates; its value is always OWNER_VALUE. */
export const OWNER_LABEL = "mini-agent.owner";
export const OWNER_VALUE = "mini-agent";
/** the run (or probe/test run id) a sandbox belongs to. */
export const RUN_LABEL = "mini-agent.run";
/** why the sandbox exists: candidate, verifier, acceptance, probe, bench, session, ... */
export const PURPOSE_LABEL = "mini-agent.purpose";
/** the daemon (its state dir) that made it, so only that daemon's start-up reaper removes it. */
export const INSTANCE_LABEL = "mini-agent.instance";
/** names one sandbox container; its volumes carry it too, so they can be found if the engine leaves them. */
export const SANDBOX_LABEL = "mini-agent.sandbox";
/**
 * On a pooled sandbox (sandbox-pool.ts): the key of the configuration it was made for.
 * A pool member carries no RUN_LABEL: it is made before any run asks for it, and labels
 * cannot change after create; the executor logs which run it served.
 */
export const POOL_LABEL = "mini-agent.pool";
/** PURPOSE_LABEL's value on a pooled sandbox. */
export const POOL_PURPOSE = "pool";
/** Testcontainers' own label on what it starts (its reaper's and our leftover check's filter). */
export const TESTCONTAINERS_LABEL = "org.testcontainers";

/**
 * On a built-in family's IMAGE (set by the build from the root filesystem it sent): the programs
 * on its PATH, comma-separated (sandbox/image-programs.ts). A custom family inherits its base's
 * label but may add programs, so its image is read instead (it carries CUSTOM_BASE_LABEL).
 */
export const PROGRAMS_LABEL = "mini-agent.programs";
export const CUSTOM_BASE_LABEL = "mini-agent.family-base";

/** `key=value` as the engine's label filters take it. */
export function labelFilter(key: string, value: string): string {
  return `${key}=${value}`;
}

/** the filter that finds everything mini-agent made */
export const OWNER_FILTER = labelFilter(OWNER_LABEL, OWNER_VALUE);

export type Purpose = SandboxRunRequest["purpose"] | "session" | "layer_build" | "image_read" | "install";

/**
 * On a dependency layer's VOLUME (sandbox/dependency-layer.ts): its key. A layer is
 * kept across runs and daemon restarts on purpose, so it carries no OWNER_LABEL (the
 * start-up reaper and the leftover check would remove it); `env gc` removes layers,
 * and only the instance's own (INSTANCE_LABEL).
 */
export const LAYER_LABEL = "mini-agent.layer";
/** the dependency folder a layer holds (node_modules, .venv, venv, vendor) */
export const LAYER_FOLDER_LABEL = "mini-agent.layer-folder";

/** The labels every sandbox container and its volumes carry. */
export function sandboxLabels(runId: string, purpose: Purpose, instance: string | null = null): Record<string, string> {
  const labels: Record<string, string> = { [OWNER_LABEL]: OWNER_VALUE, [RUN_LABEL]: runId, [PURPOSE_LABEL]: purpose };
  if (instance !== null) labels[INSTANCE_LABEL] = instance;
  return labels;
}

/** The labels of a pool member: owner and instance as every sandbox, no run, the pool's key. */
export function poolLabels(key: string, instance: string | null = null): Record<string, string> {
  const labels: Record<string, string> = { [OWNER_LABEL]: OWNER_VALUE, [PURPOSE_LABEL]: POOL_PURPOSE, [POOL_LABEL]: key };
  if (instance !== null) labels[INSTANCE_LABEL] = instance;
  return labels;
}

/**
 * On a sandbox IMAGE (set by the build): the version of the protocol between
 * the daemon and the image's helpers (spawner requests, e.g. SPAWN_PUT). The
 * daemon runs only an image of its own protocol, so an image built by an
 * older mini-agent is refused with the command that rebuilds it instead of
 * failing inside the first run.
 */
export const PROTOCOL_LABEL = "mini-agent.sandbox-protocol";
/**
 * 2: the workspace goes in over the spawner's channel (SPAWN_PUT).
 * 3: that tar may hold symlinks (workspace/export-links.ts), which an image of 2 refuses.
 */
export const SANDBOX_PROTOCOL = "3";
