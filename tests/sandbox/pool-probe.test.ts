import crypto from "node:crypto";
import fs from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveSandboxConfig } from "../../daemon/src/sandbox/config.js";
import { IN_IMAGE } from "../../daemon/src/sandbox/host-config.js";
import { INSTANCE_LABEL, labelFilter, POOL_PURPOSE, PURPOSE_LABEL } from "../../daemon/src/sandbox/labels.js";
import { reapLeftovers } from "../../daemon/src/sandbox/reaper.js";
import { SandboxPool } from "../../daemon/src/sandbox/sandbox-pool.js";
import { runIsolationProbes } from "../../probes/run.js";
import type { IsolationReport, ProbeResult } from "../../probes/types.js";
import { availableRuntimes, docker, freshStateDir } from "./helpers.js";

/**
 * `pooled_indistinguishable` in a real probe run: it passes for a pool member
 * nothing touched, and fails for one that was used (a file left in /workspace
 * and /tmp, a process left running) before the pool handed it out.
 */
let state: Awaited<ReturnType<typeof freshStateDir>>;
const instances: string[] = [];
const runtimes = await availableRuntimes();

beforeAll(async () => {
  state = await freshStateDir();
}, 600_000);
afterAll(async () => {
  for (const instance of instances) await reapLeftovers(docker, { instance });
  await fs.rm(state.stateDir, { recursive: true, force: true });
});

/** runs argv in the container with `docker exec`, as someone who got hold of it would; waits unless detached */
async function execIn(id: string, argv: string[], detach = false): Promise<void> {
  const exec = await docker.getContainer(id).exec({ Cmd: argv, AttachStdout: !detach, AttachStderr: !detach });
  const stream = await exec.start({ Detach: detach });
  if (!detach) await new Promise((r) => (stream as NodeJS.ReadableStream).on("end", r).resume());
}

describe.each(runtimes)("pooled_indistinguishable on %s", (runtime) => {
  const probeOf = (r: IsolationReport): ProbeResult => r.probes.find((p) => p.id === "pooled_indistinguishable")!;
  const config = () => {
    const instance = crypto.randomBytes(8).toString("hex");
    instances.push(instance);
    return { runtime, instance };
  };

  it("passes: a pool member is handed over exactly as a fresh sandbox", async () => {
    const r = (await runIsolationProbes({ stateDir: state.stateDir, config: config(), docker, hostEnv: { ...process.env } })) as IsolationReport;
    const p = probeOf(r);
    expect({ passed: p.passed, observed: p.observed }).toMatchObject({ passed: true, observed: { served_by_pool: true, inspect_differences: [] } });
  }, 300_000);

  it("fails for a member used before it was handed out (a file in /workspace and /tmp, a process left running)", async () => {
    const overrides = config();
    const pool = new SandboxPool({ docker, size: 1 });
    try {
      await pool.whenFilled({ config: resolveSandboxConfig(overrides), digest: state.digest, withControl: true });
      const [member] = await docker.listContainers({
        filters: { label: [labelFilter(INSTANCE_LABEL, overrides.instance), labelFilter(PURPOSE_LABEL, POOL_PURPOSE)] },
      });
      expect(member).toBeDefined();
      // a static helper of every image: it needs no language runtime
      await execIn(member!.Id, [IN_IMAGE.syscallHelper, "stubborn"], true);
      await execIn(member!.Id, ["node", "-e", "require('fs').writeFileSync('/workspace/left','x');require('fs').writeFileSync('/tmp/left','x')"]);
      const r = (await runIsolationProbes({ stateDir: state.stateDir, config: overrides, docker, hostEnv: { ...process.env }, pool })) as IsolationReport;
      const p = probeOf(r);
      expect(p.passed).toBe(false);
      expect(r.passed).toBe(false);
      const seen = p.observed as { served_by_pool: boolean; workspace: { pooled: string[] }; processes: { fresh: string[]; pooled: string[] } };
      expect(seen.served_by_pool).toBe(true);
      expect(seen.workspace.pooled).toEqual(["workspace/left"]);
      expect(seen.processes.pooled.length).toBeGreaterThan(seen.processes.fresh.length);
    } finally {
      await pool.drain();
    }
  }, 300_000);
});
