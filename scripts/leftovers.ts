/**
 * Lists (and with --remove, removes) every container and volume that mini-agent
 * or its Testcontainers-based tests created. Exits 1 when anything was found,
 * so a test run that leaks a sandbox fails even if its assertions passed.
 */
import Docker from "dockerode";
import {
  INSTANCE_LABEL,
  LAYER_LABEL,
  labelFilter,
  OWNER_FILTER,
  POOL_LABEL,
  PURPOSE_LABEL,
  RUN_LABEL,
  TESTCONTAINERS_LABEL,
} from "../daemon/src/sandbox/labels.js";
import { testInstances } from "./test-instances.js";

// LAYER_LABEL: a dependency layer's volume carries no owner label (no reaper may take a user's
// layer), so a test daemon's layers are found by their own label
const LABELS = [OWNER_FILTER, labelFilter(TESTCONTAINERS_LABEL, "true"), LAYER_LABEL];

/** under the test command: the state dir (so the test file) of the daemon that made it */
const instances = testInstances();
const madeBy = (instance: string | undefined) => {
  const stateDir = instance === undefined ? undefined : instances.get(instance);
  return stateDir === undefined ? "" : ` made by the daemon on ${stateDir}`;
};

async function main(argv: string[]): Promise<number> {
  const remove = argv.includes("--remove");
  const docker = new Docker();
  const found: string[] = [];
  for (const label of LABELS) {
    const containers = await docker.listContainers({ all: true, filters: { label: [label] } });
    for (const c of containers) {
      // purpose, run and instance say which run or daemon (and so which test) left it
      const named = [PURPOSE_LABEL, RUN_LABEL, POOL_LABEL, INSTANCE_LABEL].filter((k) => c.Labels?.[k]).map((k) => `${k}=${c.Labels[k]}`);
      found.push(`container ${c.Id.slice(0, 12)} ${c.Image} ${c.State} (${[label, ...named].join(", ")})${madeBy(c.Labels?.[INSTANCE_LABEL])}`);
      if (remove)
        await docker
          .getContainer(c.Id)
          .remove({ force: true, v: true })
          .catch(() => undefined);
    }
    const { Volumes } = await docker.listVolumes({ filters: { label: [label] } });
    for (const v of Volumes ?? []) {
      found.push(`volume ${v.Name} (${label})${madeBy(v.Labels?.[INSTANCE_LABEL])}`);
      if (remove)
        await docker
          .getVolume(v.Name)
          .remove({ force: true })
          .catch(() => undefined);
    }
  }
  if (found.length === 0) {
    console.log("leftovers: none");
    return 0;
  }
  console.error(`leftovers: ${found.length} left behind${remove ? " (removed now)" : ""}:\n  ${found.join("\n  ")}`);
  return 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`leftovers: cannot ask the Docker engine: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(2);
  },
);
