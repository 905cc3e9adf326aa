import path from "node:path";
import { fileURLToPath } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, "..");

/**
 * One image family per test-preset family. A second family (e.g. Python with
 * pytest) is another entry here: its interpreter binary, the extra trees it
 * needs, and its env; the builder copies the binaries with exactly the shared
 * libraries `ldd` lists, so nothing else is needed to add one.
 */
export interface ImageDefinition {
  family: string;
  /** local tag; the executor never runs by tag, only by the digest recorded at build time. */
  tag: string;
  /** host executables copied to the same path, with their `ldd` closure. */
  binaries: string[];
  /** extra host files or directories copied verbatim: [hostPath, imagePath]. */
  trees: Array<[string, string]>;
  /** files baked under /opt/mini-agent: [repoRelativeSource, imagePath, mode]. */
  assets: Array<[string, string, number]>;
  /** static C helpers compiled into the image: [repoRelativeSource, imagePath]. */
  staticHelpers: Array<[string, string]>;
  env: Record<string, string>;
  /** the image's CMD (there is no shell in the image). */
  cmd: string[];
}

/** the sandbox's main process and its request tool `run` (see sandbox-image/README.md). */
const SPAWN_HELPERS: Array<[string, string]> = [
  ["sandbox-image/helper/spawner.c", "/opt/mini-agent/spawner"],
  ["sandbox-image/helper/run.c", "/opt/mini-agent/run"],
];

export const IMAGE_DEFINITIONS = {
  node: {
    family: "node",
    tag: "mini-agent/sandbox-node:local",
    binaries: ["/usr/bin/node"],
    trees: [],
    assets: [["probes/inside/probe.mjs", "/opt/mini-agent/probe.mjs", 0o444]],
    staticHelpers: [...SPAWN_HELPERS, ["sandbox-image/helper/syscalls.c", "/opt/mini-agent/syscall-probe"]],
    env: { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: "/tmp", LANG: "C.UTF-8" },
    // every command is a child of the spawner, in the init process tree the runtime's seccomp filter covers
    cmd: ["/opt/mini-agent/spawner"],
  },
  /** The bare Node runtime, no sandbox helpers: a base to package the daemon on (its Dockerfile sets the entrypoint). */
  "node-base": {
    family: "node-base",
    tag: "mini-agent/node-base:local",
    binaries: ["/usr/bin/node"],
    trees: [],
    assets: [],
    staticHelpers: [],
    env: { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: "/tmp", LANG: "C.UTF-8" },
    cmd: ["/usr/bin/node"],
  },
} satisfies Record<string, ImageDefinition>;

export type ImageFamily = keyof typeof IMAGE_DEFINITIONS;

export function repoPath(rel: string): string {
  return path.join(REPO, rel);
}
