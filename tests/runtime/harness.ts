import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createDockerClient } from "../../daemon/src/sandbox/docker-client.js";
import { DockerExecutor } from "../../daemon/src/sandbox/docker-executor.js";
import { createRunService, type RunServiceOptions, type RunServiceImpl } from "../../daemon/src/runtime/service-impl.js";
import type { RunView } from "../../daemon/src/runtime/service.js";
import { pinTestImage } from "../kit/sandbox-image.js";
import { labelFilter, RUN_LABEL } from "../../daemon/src/sandbox/labels.js";

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const LINKCHECK = path.join(REPO_ROOT, "fixtures", "linkcheck");

export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `mini-agent-${prefix}-`));
}

/**
 * The real container executor: builds (content-addressed, so usually a cache
 * hit) the pinned sandbox image and records it in a lock inside the test's
 * state dir, so no shared state is touched.
 */
export async function containerExecutor(stateDir: string): Promise<DockerExecutor> {
  const docker = createDockerClient({});
  const lockPath = path.join(stateDir, "sandbox-image.lock.json");
  fs.mkdirSync(stateDir, { recursive: true });
  await pinTestImage(lockPath, "node", docker);
  return new DockerExecutor({ lockPath, docker });
}

export function service(stateDir: string, executor: DockerExecutor, extra: Partial<RunServiceOptions> = {}): RunServiceImpl {
  return createRunService({ stateDir, executorFactory: () => executor, ...extra });
}

/** Containers and volumes still labelled with these run ids. */
export async function leftovers(runIds: readonly string[]): Promise<string[]> {
  const docker = createDockerClient({});
  const found: string[] = [];
  for (const runId of runIds) {
    const filters = { label: [labelFilter(RUN_LABEL, runId)] };
    for (const c of await docker.listContainers({ all: true, filters })) found.push(`container ${c.Id}`);
    for (const v of (await docker.listVolumes({ filters })).Volumes ?? []) found.push(`volume ${v.Name}`);
  }
  return found;
}

export function expectStatus(view: RunView, status: RunView["status"]): RunView {
  if (view.status !== status) throw new Error(`expected ${status}, got ${view.status} (${view.reason})`);
  return view;
}
