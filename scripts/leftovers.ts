/**
 * Lists (and with --remove, removes) every container and volume that mini-agent
 * or its Testcontainers-based tests created. Exits 1 when anything was found,
 * so a test run that leaks a sandbox fails even if its assertions passed.
 *
 * `--record FILE` (before the tests) writes what is there already: a daemon the
 * user runs on this machine keeps pool members and dependency layers on purpose.
 * `--except FILE` (after) leaves exactly those alone, neither reported nor removed,
 * so the check judges what the test run made and never takes a user's things.
 */
import fs from "node:fs";
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

interface Found {
  /** `container ID` or `volume NAME`: what --record writes and --except reads, one per line */
  key: string;
  line: string;
  remove: () => Promise<unknown>;
}

async function present(docker: Docker): Promise<Found[]> {
  const found = new Map<string, Found>();
  for (const label of LABELS) {
    for (const c of await docker.listContainers({ all: true, filters: { label: [label] } })) {
      // purpose, run, pool and instance say which run or daemon (and so which test) left it
      const named = [PURPOSE_LABEL, RUN_LABEL, POOL_LABEL, INSTANCE_LABEL].filter((k) => c.Labels?.[k]).map((k) => `${k}=${c.Labels[k]}`);
      const key = `container ${c.Id}`;
      found.set(key, {
        key,
        line: `container ${c.Id.slice(0, 12)} ${c.Image} ${c.State} (${[label, ...named].join(", ")})${madeBy(c.Labels?.[INSTANCE_LABEL])}`,
        remove: () => docker.getContainer(c.Id).remove({ force: true, v: true }),
      });
    }
    for (const v of (await docker.listVolumes({ filters: { label: [label] } })).Volumes ?? []) {
      const key = `volume ${v.Name}`;
      found.set(key, {
        key,
        line: `volume ${v.Name} (${label})${madeBy(v.Labels?.[INSTANCE_LABEL])}`,
        remove: () => docker.getVolume(v.Name).remove({ force: true }),
      });
    }
  }
  return [...found.values()];
}

function flagValue(argv: string[], flag: string): string | undefined {
  const i = argv.indexOf(flag);
  return i === -1 ? undefined : argv[i + 1];
}

async function main(argv: string[]): Promise<number> {
  const docker = new Docker();
  const record = flagValue(argv, "--record");
  if (record !== undefined) {
    const keys = (await present(docker)).map((f) => f.key);
    fs.writeFileSync(record, keys.map((k) => `${k}\n`).join(""));
    if (keys.length > 0) console.log(`leftovers: ${keys.length} present before the tests (a daemon of this machine's own); left alone`);
    return 0;
  }
  const except = flagValue(argv, "--except");
  const before = new Set(except !== undefined && fs.existsSync(except) ? fs.readFileSync(except, "utf8").split("\n").filter(Boolean) : []);
  const found = (await present(docker)).filter((f) => !before.has(f.key));
  if (found.length === 0) {
    console.log("leftovers: none");
    return 0;
  }
  const remove = argv.includes("--remove");
  if (remove) for (const f of found) await f.remove().catch(() => undefined);
  console.error(`leftovers: ${found.length} left behind${remove ? " (removed now)" : ""}:\n  ${found.map((f) => f.line).join("\n  ")}`);
  return 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`leftovers: cannot ask the Docker engine: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(2);
  },
);
