import crypto from "node:crypto";
import fs from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DockerExecutor } from "../../daemon/src/sandbox/docker-executor.js";
import { INSTANCE_LABEL, labelFilter, OWNER_FILTER, POOL_LABEL, PURPOSE_LABEL, RUN_LABEL } from "../../daemon/src/sandbox/labels.js";
import { reapLeftovers } from "../../daemon/src/sandbox/reaper.js";
import { poolKey, SandboxPool } from "../../daemon/src/sandbox/sandbox-pool.js";
import type { SandboxContainer } from "../../daemon/src/sandbox/sandbox-container.js";
import { availableRuntimes, docker, freshStateDir, runIdPrefix, workspace } from "./helpers.js";

/**
 * The fresh-sandbox pool on the real engine: a member serves one run and is
 * removed, the pool refills, its key keeps configurations apart, and drain
 * leaves nothing. Every executor here carries its own instance label, so the
 * listings and the last-resort clean-up see only this file's containers.
 */
const prefix = runIdPrefix("pool");
const instances: string[] = [];
let env: Awaited<ReturnType<typeof freshStateDir>>;
let ws: string;
let ctl: string;

function newInstance(): string {
  const id = crypto.randomBytes(8).toString("hex");
  instances.push(id);
  return id;
}

async function containersOf(instance: string): Promise<Array<{ id: string; labels: Record<string, string> }>> {
  const list = await docker.listContainers({ all: true, filters: { label: [OWNER_FILTER, labelFilter(INSTANCE_LABEL, instance)] } });
  return list.map((c) => ({ id: c.Id, labels: c.Labels }));
}

async function volumesOf(instance: string): Promise<string[]> {
  return ((await docker.listVolumes({ filters: { label: [OWNER_FILTER, labelFilter(INSTANCE_LABEL, instance)] } })).Volumes ?? []).map((v) => v.Name);
}

async function exists(id: string): Promise<boolean> {
  return docker
    .getContainer(id)
    .inspect()
    .then(
      () => true,
      (e: { statusCode?: number }) => (e.statusCode === 404 ? false : Promise.reject(e)),
    );
}

beforeAll(async () => {
  env = await freshStateDir();
  ws = await workspace({ "a.txt": "A", "t.cjs": "console.log(require('fs').readFileSync('/workspace/a.txt','utf8'))" });
  ctl = await workspace({ "case.json": "{}" });
}, 600_000);
afterAll(async () => {
  for (const instance of instances) await reapLeftovers(docker, { instance });
  await fs.rm(env.stateDir, { recursive: true, force: true });
  await fs.rm(ws, { recursive: true, force: true });
  await fs.rm(ctl, { recursive: true, force: true });
});

const runtimes = await availableRuntimes();

describe.each(runtimes)("sandbox pool on %s", (runtime) => {
  const setup = (size: number, overrides: Record<string, unknown> = {}) => {
    const instance = newInstance();
    const pool = new SandboxPool({ docker, size });
    const ex = new DockerExecutor({ lockPath: env.lockPath, config: { runtime, instance, ...overrides }, docker, pool });
    return { instance, pool, ex, req: (withControl = false) => ({ config: ex.config, digest: env.digest, withControl }) };
  };
  const run = (ex: DockerExecutor, name: string, seen: Array<{ box: SandboxContainer; pooled: boolean }>, controlDir?: string) =>
    ex.runFresh(
      {
        runId: `${prefix}-${name}`,
        purpose: "verifier",
        argv: ["node", "t.cjs"],
        workspaceDir: ws,
        timeoutMs: 60_000,
        ...(controlDir !== undefined && { controlDir }),
      },
      { beforeContent: async (box, pooled) => void seen.push({ box, pooled }) },
    );

  it("a pooled sandbox serves ONE run, is removed after it, and the pool refills with a new one", async () => {
    const { instance, pool, ex, req } = setup(1);
    try {
      expect(await pool.whenFilled(req())).toBe(1);
      const before = await containersOf(instance);
      expect(before).toHaveLength(1);
      // a pool member belongs to no run yet: it is labelled as a pool member of this key
      expect(before[0]!.labels).toMatchObject({ [PURPOSE_LABEL]: "pool", [POOL_LABEL]: poolKey(req()) });
      expect(before[0]!.labels[RUN_LABEL]).toBeUndefined();

      const seen: Array<{ box: SandboxContainer; pooled: boolean }> = [];
      const first = await run(ex, "once-1", seen);
      expect({ exit: first.exit_code, out: first.stdout.trim() }).toEqual({ exit: 0, out: "A" });
      expect(seen.map((s) => [s.box.id, s.pooled])).toEqual([[before[0]!.id, true]]);

      await pool.whenRetired();
      expect(await exists(before[0]!.id)).toBe(false);
      expect(await pool.whenFilled(req())).toBe(1);
      const refilled = await containersOf(instance);
      expect(refilled.map((c) => c.id)).not.toContain(before[0]!.id);
      expect(refilled).toHaveLength(1);

      // the next run gets the new member, never the used one
      const second = await run(ex, "once-2", seen);
      expect(second.exit_code).toBe(0);
      expect(seen[1]).toMatchObject({ pooled: true });
      expect(seen[1]!.box.id).toBe(refilled[0]!.id);
    } finally {
      await pool.drain();
    }
    expect(await containersOf(instance)).toEqual([]);
  }, 240_000);

  it("regression: a run never gets a sandbox made for another configuration (memory limit, /control mount)", async () => {
    const instance = newInstance();
    const pool = new SandboxPool({ docker, size: 1 });
    const small = new DockerExecutor({ lockPath: env.lockPath, config: { runtime, instance, memoryBytes: 256 * 1024 * 1024 }, docker, pool });
    const big = new DockerExecutor({ lockPath: env.lockPath, config: { runtime, instance, memoryBytes: 384 * 1024 * 1024 }, docker, pool });
    try {
      // only the small config's key (without /control) is filled
      expect(await pool.whenFilled({ config: small.config, digest: env.digest, withControl: false })).toBe(1);
      const [member] = await containersOf(instance);
      const seen: Array<{ box: SandboxContainer; pooled: boolean }> = [];
      // another HostConfig: a fresh sandbox, with its own limit
      expect((await run(big, "key-big", seen)).exit_code).toBe(0);
      // a /control mount: another key too
      expect((await run(small, "key-ctl", seen, ctl)).exit_code).toBe(0);
      expect(seen.map((s) => s.pooled)).toEqual([false, false]);
      expect(seen.map((s) => s.box.id)).not.toContain(member!.id);
      // the member made for it goes to the small config's plain run, and only there
      expect((await run(small, "key-small", seen)).exit_code).toBe(0);
      expect(seen[2]).toMatchObject({ pooled: true });
      expect(seen[2]!.box.id).toBe(member!.id);
      // what each box really was: its own limit
      const memOf = async (id: string) =>
        (
          await docker
            .getContainer(id)
            .inspect()
            .catch(() => null)
        )?.HostConfig?.Memory;
      await pool.whenFilled({ config: big.config, digest: env.digest, withControl: false });
      for (const c of await containersOf(instance)) {
        // a used member is removed in the background: one gone between the list and its inspect has nothing to show
        const mem = await memOf(c.id);
        if (mem === undefined) continue;
        const want =
          c.labels[POOL_LABEL] === poolKey({ config: big.config, digest: env.digest, withControl: false }) ? big.config.memoryBytes : small.config.memoryBytes;
        expect(mem).toBe(want);
      }
    } finally {
      await pool.drain();
    }
  }, 240_000);

  it("drain removes every member, ready or just used, and their volumes; a drained pool hands out nothing", async () => {
    const { instance, pool, ex, req } = setup(2);
    await pool.whenFilled(req());
    await pool.whenFilled(req(true));
    expect(await containersOf(instance)).toHaveLength(4);
    const seen: Array<{ box: SandboxContainer; pooled: boolean }> = [];
    // a run whose box is still being removed while the pool drains
    expect((await run(ex, "drain", seen)).exit_code).toBe(0);
    expect(await pool.drain()).toBeGreaterThanOrEqual(3);
    expect(await containersOf(instance)).toEqual([]);
    expect(await volumesOf(instance)).toEqual([]);
    expect(await pool.take(req())).toBeNull();
    expect(await containersOf(instance)).toEqual([]);
  }, 240_000);

  it("a member killed while it waited is removed, never handed out; the run gets a fresh sandbox", async () => {
    const { instance, pool, ex, req } = setup(1);
    try {
      await pool.whenFilled(req());
      const [member] = await containersOf(instance);
      await docker.getContainer(member!.id).kill({ signal: "SIGKILL" });
      const seen: Array<{ box: SandboxContainer; pooled: boolean }> = [];
      expect((await run(ex, "dead", seen)).exit_code).toBe(0);
      expect(seen[0]).toMatchObject({ pooled: false });
      await pool.whenRetired();
      expect(await exists(member!.id)).toBe(false);
    } finally {
      await pool.drain();
    }
  }, 240_000);

  it("size 0 disables the pool: every run makes its own sandbox and nothing waits", async () => {
    const { instance, pool, ex, req } = setup(0);
    const seen: Array<{ box: SandboxContainer; pooled: boolean }> = [];
    expect((await run(ex, "off", seen)).exit_code).toBe(0);
    expect(seen[0]).toMatchObject({ pooled: false });
    expect(await pool.whenFilled(req())).toBe(0);
    expect(await containersOf(instance)).toEqual([]);
  }, 120_000);
});
