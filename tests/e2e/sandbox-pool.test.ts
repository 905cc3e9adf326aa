import fs from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { instanceIdFor } from "../../daemon/src/config/state-dir.js";
import { createDockerClient } from "../../daemon/src/sandbox/docker-client.js";
import { INSTANCE_LABEL, labelFilter, OWNER_FILTER, POOL_PURPOSE, PURPOSE_LABEL, sandboxLabels } from "../../daemon/src/sandbox/labels.js";
import { reapLeftovers } from "../../daemon/src/sandbox/reaper.js";
import { pinTestImage } from "../kit/sandbox-image.js";
import { allFiles, REPO, runClient, Started, type ClientResult, stateDirIn } from "./harness.js";

/**
 * The daemon's sandbox pool across its lifecycle, with the real daemon, client
 * and engine: the Verifier's fresh runs are served by pool members (the log ties
 * each to its run), a SIGTERMed daemon leaves no member behind, and the members
 * of a SIGKILLed one are removed by the next daemon's start-up reaper.
 */
const FIXTURE = path.join(REPO, "fixtures/linkcheck");
const docker = createDockerClient(process.env);
const started = new Started();
const instances: string[] = [];
let imageLock: string;

beforeAll(async () => {
  await docker.ping();
  imageLock = path.join(started.dir("ma-pool-image-"), "sandbox-image.lock.json");
  await pinTestImage(imageLock);
}, 600_000);
afterEach(async () => started.stopDaemons("SIGTERM"));
afterAll(async () => {
  await started.stopDaemons("SIGKILL");
  for (const instance of instances) await reapLeftovers(docker, { instance });
  started.removeDirs();
});

function stateDirWithImage(): string {
  const s = stateDirIn(started.dir("ma-pool-"), imageLock);
  instances.push(instanceIdFor(s));
  return s;
}

function statusOf(r: ClientResult): { status: string; action_id: string | null } {
  const lines = r.stdout.trim().split("\n");
  return JSON.parse(lines.slice(lines.findIndex((l) => l.startsWith("{"))).join("\n"));
}

/** the linkcheck fixture fixed through the client: two approvals, then the Verifier's fresh runs */
async function completedRun(stateDir: string, socketPath: string): Promise<string> {
  const socket = ["--socket", socketPath];
  const first = await runClient(["run", "--fixture", FIXTURE, "--workspace", path.join(path.dirname(stateDir), "ws"), ...socket]);
  expect({ code: first.code, err: first.stderr }).toMatchObject({ code: 3 });
  const runId = /run (\S+) started/.exec(first.stdout)?.[1] ?? "";
  let last = first;
  for (let i = 0; i < 4 && last.code === 3; i++) {
    const s = statusOf(await runClient(["status", runId, "--json", ...socket]));
    last = await runClient(["approve", runId, s.action_id!, ...socket]);
  }
  expect({ code: last.code, out: last.stdout + last.stderr }).toMatchObject({ code: 0 });
  return runId;
}

async function mine(stateDir: string, purpose?: string) {
  const label = [OWNER_FILTER, labelFilter(INSTANCE_LABEL, instanceIdFor(stateDir)), ...(purpose ? [labelFilter(PURPOSE_LABEL, purpose)] : [])];
  const containers = await docker.listContainers({ all: true, filters: { label } });
  const volumes = (await docker.listVolumes({ filters: { label } })).Volumes ?? [];
  return { containers: containers.map((c) => c.Id), volumes: volumes.map((v) => v.Name) };
}

/**
 * Ready members: pool-labelled containers that never served a run (a used one keeps its
 * pool label until its removal, in the background, is done). The refill runs in the
 * background after each take: wait for it, never for a fixed time.
 */
async function poolMembers(stateDir: string, atLeast: number): Promise<string[]> {
  for (let i = 0; i < 600; i++) {
    const used = new Set(logLines(stateDir).flatMap((l) => (l.msg === "pooled sandbox serves this run" ? [String(l.container)] : [])));
    const ids = (await mine(stateDir, POOL_PURPOSE)).containers.filter((id) => !used.has(id));
    if (ids.length >= atLeast) return ids;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the pool never held ${atLeast} member(s)`);
}

function logLines(stateDir: string): Array<Record<string, unknown>> {
  return allFiles(path.join(stateDir, "logs")).flatMap((f) =>
    fs
      .readFileSync(f, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>),
  );
}

describe("the daemon's sandbox pool", () => {
  it("regression: a SIGTERMed daemon drains its pool, so the leftover check finds no member after it stopped", async () => {
    const stateDir = stateDirWithImage();
    const d = await started.daemon({ stateDir, args: ["--sandbox-pool", "2"] });
    const runId = await completedRun(stateDir, d.socketPath);
    // the Verifier's fresh runs took members and the pool refilled behind them
    expect(await poolMembers(stateDir, 1)).not.toEqual([]);
    expect(await d.stop("SIGTERM")).toBe(0);
    expect(await mine(stateDir)).toEqual({ containers: [], volumes: [] });
    // a pooled sandbox has no run label: the daemon's log says which run each one served
    const served = logLines(stateDir).filter((l) => l.msg === "pooled sandbox serves this run");
    expect(served.length).toBeGreaterThan(0);
    expect(served.every((l) => l.runId === runId && typeof l.container === "string")).toBe(true);
    expect(logLines(stateDir).some((l) => l.msg === "sandbox pool drained")).toBe(true);
  }, 600_000);

  it("a SIGKILLed daemon's pool members are removed by the next daemon's start-up reaper", async () => {
    const stateDir = stateDirWithImage();
    const d1 = await started.daemon({ stateDir, args: ["--sandbox-pool", "2"] });
    await completedRun(stateDir, d1.socketPath);
    const members = await poolMembers(stateDir, 1);
    await d1.stop("SIGKILL");
    // nothing drained them: they are still there, running
    expect((await mine(stateDir, POOL_PURPOSE)).containers).toEqual(expect.arrayContaining(members));
    const d2 = await started.daemon({ stateDir, args: ["--sandbox-pool", "0"] });
    // the reaper runs before the daemon listens: by "ready" they are gone
    expect(await mine(stateDir)).toEqual({ containers: [], volumes: [] });
    expect(await d2.stop("SIGTERM")).toBe(0);
  }, 600_000);

  it("regression: a sandbox of the daemon's that the engine still held at SIGTERM (a removal refused under load left two pool members and a layer behind in a full run) is removed before the daemon exits", async () => {
    const stateDir = stateDirWithImage();
    const d = await started.daemon({ stateDir, args: ["--sandbox-pool", "0"] });
    const digest = (JSON.parse(fs.readFileSync(path.join(stateDir, "sandbox-image.lock.json"), "utf8")) as { images: { node: { digest: string } } }).images.node
      .digest;
    // what a refused removal leaves: a container with this daemon's labels that no run or pool holds any more
    const left = await docker.createContainer({ Image: digest, Labels: sandboxLabels("run-that-did-not-stop", "candidate", instanceIdFor(stateDir)) });
    expect((await mine(stateDir)).containers).toEqual([left.id]);
    expect(await d.stop("SIGTERM")).toBe(0);
    expect(await mine(stateDir)).toEqual({ containers: [], volumes: [] });
    expect(logLines(stateDir).find((l) => l.msg === "sandboxes still present at shutdown were removed")?.swept).toEqual({ containers: 1, volumes: 0 });
  }, 600_000);

  it("--sandbox-pool 0: the Verifier's runs make their own sandboxes and no member is ever made", async () => {
    const stateDir = stateDirWithImage();
    const d = await started.daemon({ stateDir, args: ["--sandbox-pool", "0"] });
    await completedRun(stateDir, d.socketPath);
    expect((await mine(stateDir, POOL_PURPOSE)).containers).toEqual([]);
    expect(logLines(stateDir).filter((l) => l.msg === "pooled sandbox serves this run")).toEqual([]);
    expect(await d.stop("SIGTERM")).toBe(0);
  }, 600_000);
});
