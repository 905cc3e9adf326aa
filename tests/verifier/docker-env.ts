import fs from "node:fs/promises";
import path from "node:path";
import { createDockerClient } from "../../daemon/src/sandbox/docker-client.js";
import { DockerExecutor } from "../../daemon/src/sandbox/docker-executor.js";
import { recordImage } from "../../daemon/src/sandbox/image-lock.js";
import { buildFamily } from "../../sandbox-image/image-builder.js";

/**
 * A real container executor for verifier tests: builds (or reuses, the build is
 * content-addressed) the pinned sandbox image and records it in a lock inside
 * the test's own temp dir, so no shared state dir is touched.
 */
export async function realExecutor(tmpDir: string): Promise<DockerExecutor> {
  const docker = createDockerClient({});
  const built = await buildFamily(docker, "node");
  const lockPath = path.join(tmpDir, "sandbox-image.lock.json");
  await fs.mkdir(tmpDir, { recursive: true });
  await recordImage(lockPath, "node", { tag: built.tag, digest: built.digest, built_at: "1970-01-01T00:00:00.000Z" });
  return new DockerExecutor({ lockPath, docker });
}

/** Containers and volumes still carrying one of these run ids (what a leak check may look at). */
export async function leftoversFor(runIds: readonly string[]): Promise<string[]> {
  const docker = createDockerClient({});
  const found: string[] = [];
  for (const runId of runIds) {
    const filters = { label: [`mini-agent.run=${runId}`] };
    for (const c of await docker.listContainers({ all: true, filters })) found.push(`container ${c.Id}`);
    for (const v of (await docker.listVolumes({ filters })).Volumes ?? []) found.push(`volume ${v.Name}`);
  }
  return found;
}
