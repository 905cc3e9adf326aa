import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDockerClient } from "../../daemon/src/sandbox/docker-client.js";
import { LAYER_LABEL, sandboxLabels } from "../../daemon/src/sandbox/labels.js";
import { REPO } from "../e2e/harness.js";
import { pinTestImage } from "../kit/sandbox-image.js";

/**
 * The test command's leftover check (scripts/leftovers.ts) against the real engine. Other test
 * files run beside this one, so it never removes anything (no --remove) and asserts only about
 * what it made itself.
 */
const docker = createDockerClient(process.env);
const run = promisify(execFile);
let dir: string;
let digest: string;
const made: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "ma-leftovers-"));
  digest = (await pinTestImage(path.join(dir, "sandbox-image.lock.json"), "node", docker)).digest;
}, 600_000);
afterAll(async () => {
  for (const remove of made.splice(0)) await remove().catch(() => undefined);
  fs.rmSync(dir, { recursive: true, force: true });
});

async function leftovers(...args: string[]): Promise<{ code: number; out: string }> {
  try {
    const r = await run(process.execPath, ["--import", "tsx", "scripts/leftovers.ts", ...args], { cwd: REPO });
    return { code: 0, out: r.stdout + r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, out: e.stdout + e.stderr };
  }
}

describe("the test run's leftover check", () => {
  it("regression: a daemon of the machine's own (its pool member and its kept layer) failed every test run as a leak; what was there before the tests is left alone, and what the run made is still reported", async () => {
    const before = path.join(dir, "present-before.txt");
    // the machine's own daemon, running before the tests started: a pool member and a dependency layer
    const own = await docker.createContainer({ Image: digest, Labels: sandboxLabels("users-run", "candidate", "0123456789abcdef") });
    made.push(() => own.remove({ force: true }));
    const layer = `mini-agent-layer-leftovers-test-${path.basename(dir)}`;
    await docker.createVolume({ Name: layer, Labels: { [LAYER_LABEL]: "k" } });
    made.push(() => docker.getVolume(layer).remove({ force: true }));
    expect((await leftovers("--record", before)).code).toBe(0);
    expect(fs.readFileSync(before, "utf8").split("\n")).toEqual(expect.arrayContaining([`container ${own.id}`, `volume ${layer}`]));

    // a leak of the test run itself
    const leak = await docker.createContainer({ Image: digest, Labels: sandboxLabels("leaked-run", "candidate", "fedcba9876543210") });
    made.push(() => leak.remove({ force: true }));
    const after = await leftovers("--except", before);
    expect(after.code).toBe(1);
    expect(after.out).toContain(`container ${leak.id.slice(0, 12)}`);
    expect(after.out).not.toContain(own.id.slice(0, 12));
    expect(after.out).not.toContain(layer);

    // without the record, the machine's own are reported as well (what the check did before)
    const all = await leftovers();
    expect(all.out).toContain(own.id.slice(0, 12));
    expect(all.out).toContain(layer);
  }, 120_000);
});
