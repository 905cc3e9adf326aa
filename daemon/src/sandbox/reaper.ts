import type Docker from "dockerode";
import { INSTANCE_LABEL, labelFilter, OWNER_FILTER, RUN_LABEL } from "./labels.js";
import { forceRemove } from "./force-remove.js";
import { engineError } from "./image-pin.js";

/**
 * Removes every container and volume carrying the owner label, narrowed to one
 * run's and/or one daemon instance's. The daemon calls it at start-up with its
 * instance: whatever it left when it died is gone before anything new runs.
 */
export async function reapLeftovers(docker: Docker, opts: { runId?: string; instance?: string } = {}): Promise<{ containers: number; volumes: number }> {
  const label = [OWNER_FILTER];
  if (opts.runId) label.push(labelFilter(RUN_LABEL, opts.runId));
  if (opts.instance) label.push(labelFilter(INSTANCE_LABEL, opts.instance));
  let containers = 0;
  let volumes = 0;
  try {
    for (const c of await docker.listContainers({ all: true, filters: { label } })) {
      if ((await forceRemove(docker.getContainer(c.Id), { withVolumes: true })) === null) containers++;
    }
    const vols = (await docker.listVolumes({ filters: { label } })).Volumes ?? [];
    for (const v of vols) {
      if ((await forceRemove(docker.getVolume(v.Name))) === null) volumes++;
    }
  } catch (err) {
    throw engineError(err);
  }
  return { containers, volumes };
}
