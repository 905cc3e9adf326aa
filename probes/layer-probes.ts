import fs from "node:fs/promises";
import path from "node:path";
import type Docker from "dockerode";
import tarStream from "tar-stream";
import { DependencyLayers } from "../daemon/src/sandbox/dependency-layer.js";
import type { DockerExecutor } from "../daemon/src/sandbox/docker-executor.js";
import { layerTarget } from "../daemon/src/sandbox/host-config.js";
import { SandboxContainer } from "../daemon/src/sandbox/sandbox-container.js";
import { PUT_WORKSPACE_TIMEOUT_MS } from "../daemon/src/sandbox/workspace-tar.js";
import { type InsideRun, insideProbes, p } from "./inside-run.js";
import type { ProbeResult } from "./types.js";

/** Every probe of the layer-mounted sandbox carries this prefix: the same probe ids, another sandbox kind. */
export const LAYER_PREFIX = "layer_sandbox.";

/** A tar holding one file under the layer's folder: what a write into the layer would be. */
function oneFileTar(name: string): NodeJS.ReadableStream {
  const pack = tarStream.pack();
  pack.entry({ name, mode: 0o644 }, "probe write\n");
  pack.finalize();
  return pack as unknown as NodeJS.ReadableStream;
}

/**
 * A test sandbox with a dependency layer mounted (issue 25) is proven as the
 * plain one is: a tiny layer is built by the same code as a run's
 * (DependencyLayers), mounted read-only by the same runFresh, and the whole
 * inside probe runs there while the host inspects the container (the layer's
 * mount must be read-only, the workspace's tmpfs size unchanged). Then the
 * sandbox user tries to write into the layer, through the workspace delivery
 * that runs inside the sandbox: the kernel must refuse it.
 */
export async function layerSandboxProbes(executor: DockerExecutor, docker: Docker, digest: string, inside: InsideRun, scratch: string): Promise<ProbeResult[]> {
  const project = path.join(scratch, "layer-project");
  await fs.mkdir(path.join(project, "node_modules", "probe-dep"), { recursive: true });
  await fs.writeFile(path.join(project, "package.json"), '{"name":"probe-layer"}\n');
  // the nonce makes the layer's key (and volume) this run's own
  await fs.writeFile(path.join(project, "node_modules", "probe-dep", "index.js"), `module.exports = ${JSON.stringify(inside.nonce)};\n`);
  const layers = new DependencyLayers({ docker, dir: path.join(scratch, "layers"), instance: executor.config.instance });
  const refs = await layers.ensure(project, { forbidden: [], include: [] }, executor.config, digest);
  const ref = refs[0];
  if (!ref) return [p(`${LAYER_PREFIX}layer_built`, "a dependency layer was built for the probe", "one node_modules layer", refs, false, "anything")];
  const writeName = `node_modules/probe-write-${inside.nonce.slice(0, 12)}`;
  // in a sandbox of its own, made as runFresh makes one: a refused delivery leaves its command channel unusable.
  // A refused write alone proves little (the layer's folders are root's): the mount must be read-only too, as the
  // inside probe's mount table shows it (runc answers the write with EROFS; gVisor checks the permission first)
  const writeProbe = async (rwMounts: string[] | null): Promise<ProbeResult> => {
    let observed: string;
    const box = await SandboxContainer.start(
      docker,
      executor.config,
      digest,
      `probe-${inside.nonce.slice(0, 12)}-layer-write`,
      "probe",
      false,
      undefined,
      refs,
    );
    try {
      await box.putWorkspace(oneFileTar(writeName), PUT_WORKSPACE_TIMEOUT_MS);
      observed = "written";
    } catch (err) {
      observed = (err as Error).message;
    } finally {
      await box.remove();
    }
    const mountedRw = rwMounts === null || rwMounts.some((m) => m.startsWith(`${layerTarget(ref)}(`));
    return p(
      "layer_readonly",
      "the dependency layer is mounted read-only and the sandbox user's write into it is refused",
      { write: "refused (Read-only file system, or Permission denied before it)", mounted_read_write: false },
      { path: `${layerTarget(ref)}/${path.basename(writeName)}`, write: observed, mounted_read_write: mountedRw },
      /cannot create .*\((Read-only file system|Permission denied)\)/.test(observed) && !mountedRw,
      "that the layer's content is what the host exported (its key is checked when it is built and reused)",
    );
  };
  try {
    const { results } = await insideProbes(
      executor,
      docker,
      digest,
      { ...inside, ws: project },
      {
        layers: refs,
        extra: [{ destination: layerTarget(ref), type: "volume", rw: false }],
      },
    );
    const mounts = results.find((r) => r.id === "writable_mounts")?.observed as { rw_mounts?: string[] } | undefined;
    return [...results, await writeProbe(mounts?.rw_mounts ?? null)].map((r) => ({ ...r, id: `${LAYER_PREFIX}${r.id}` }));
  } finally {
    await layers.remove(ref.key).catch(() => undefined);
  }
}
