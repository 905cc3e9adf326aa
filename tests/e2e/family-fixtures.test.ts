import fs from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { RunView } from "../../daemon/src/contracts/run-view.js";
import { readImageLock } from "../../daemon/src/sandbox/image-lock.js";
import { createDockerClient } from "../../daemon/src/sandbox/docker-client.js";
import { pinTestImage } from "../kit/sandbox-image.js";
import { REPO, runClient, Started, type DaemonHandle, stateDirIn } from "./harness.js";

/**
 * The python and go fixtures end to end (issue 11): the real daemon and the real
 * client, the container backend, every write approved through the client. The
 * canonical replays complete and are verified; each replay that must fail is
 * refused by the Verifier for its own reason. The candidate tests are pytest and
 * `go test`, which exist only in the python and go images: a run that used the
 * node image could not get a single test discovered.
 */
const SEMVERLITE = path.join(REPO, "fixtures/semverlite");
const WORDWRAP = path.join(REPO, "fixtures/wordwrap");
const docker = createDockerClient(process.env);
const started = new Started();
let imageLock: string;

beforeAll(async () => {
  await docker.ping();
  imageLock = path.join(started.dir("ma-fam-image-"), "sandbox-image.lock.json");
  await pinTestImage(imageLock, "python", docker);
  await pinTestImage(imageLock, "go", docker);
}, 900_000);

afterEach(async () => {
  await started.stopDaemons("SIGTERM");
});

afterAll(async () => {
  await started.stopDaemons("SIGKILL");
  started.removeDirs();
});

async function daemonWithImages(): Promise<{ d: DaemonHandle; root: string }> {
  const root = started.dir("ma-fam-");
  const stateDir = stateDirIn(root, imageLock);
  return { d: await started.daemon({ stateDir }), root };
}

async function status(socket: string, runId: string): Promise<RunView> {
  const r = await runClient(["status", runId, "--json", "--socket", socket]);
  return JSON.parse(r.stdout.slice(r.stdout.indexOf("{"))) as RunView;
}

/** `run`, then `approve` every write the client prints, until the run stops; returns the final view. */
async function runApprovingEverything(fixture: string, replay?: string): Promise<{ view: RunView; out: string; code: number; ws: string }> {
  const { d, root } = await daemonWithImages();
  const ws = path.join(root, "ws");
  const socket = ["--socket", d.socketPath];
  let r = await runClient(["run", "--fixture", fixture, "--workspace", ws, ...(replay ? ["--replay", path.join(fixture, replay)] : []), ...socket]);
  const runId = /run (\S+) started/.exec(r.stdout)?.[1] ?? "";
  expect(runId, r.stdout + r.stderr).not.toBe("");
  let out = r.stdout + r.stderr;
  for (let i = 0; r.code === 3 && i < 10; i++) {
    const pending = (await status(d.socketPath, runId)).pending_action;
    expect(pending, out).not.toBeNull();
    r = await runClient(["approve", runId, pending!.action_id, ...socket]);
    out += r.stdout + r.stderr;
  }
  return { view: await status(d.socketPath, runId), out, code: r.code, ws };
}

describe("fixtures/semverlite (python image, pytest read as JUnit XML) through the client", () => {
  it("the canonical replay completes, verified by the host, in the python image", async () => {
    const { view, out, code, ws } = await runApprovingEverything(SEMVERLITE);
    expect({ code, status: view.status }, out).toEqual({ code: 0, status: "completed" });
    expect(view.image_family).toBe("python");
    expect(view.verification).toMatchObject({ passed: true, reason: null, tests: { discovered: 12, passed: 12, failed: 0 } });
    expect(view.verification?.acceptance).toMatchObject({ failed: [], error: null });
    expect(view.verification?.acceptance?.passed).toHaveLength(6);
    expect(view.counters.writes).toBe(2);
    expect(fs.readFileSync(path.join(ws, "CHANGELOG.md"))).toEqual(fs.readFileSync(path.join(SEMVERLITE, "repo/CHANGELOG.md")));
    // pytest's caches and bytecode stay in the sandbox's /tmp: nothing new beside the agent's test
    expect(fs.readdirSync(path.join(ws, "tests")).sort()).toEqual(["test_agent_two_digits.py", "test_order.py", "test_parse.py"]);
    expect(fs.existsSync(path.join(ws, "semverlite", "__pycache__"))).toBe(false);
    const lock = await readImageLock(imageLock);
    expect(lock?.images.python?.digest).toMatch(/^sha256:/);
  });

  it("the digit-count 'fix' passes every candidate test and is refused on the hidden cases sort_mixed and latest_major", async () => {
    const { view, out, code } = await runApprovingEverything(SEMVERLITE, "replays/digit-count.json");
    expect({ code, status: view.status }, out).toEqual({ code: 1, status: "failed" });
    expect(view.verification).toMatchObject({ passed: false, reason: "verification_failed", tests: { discovered: 12, passed: 12, failed: 0 } });
    expect([...(view.verification?.acceptance?.failed ?? [])].sort()).toEqual(["latest_major", "sort_mixed"]);
    expect(out).toContain("sort_mixed");
  });
});

describe("fixtures/wordwrap (go image, go test -json) through the client", () => {
  it("the canonical replay completes, verified by the host, in the go image", async () => {
    const { view, out, code, ws } = await runApprovingEverything(WORDWRAP);
    expect({ code, status: view.status }, out).toEqual({ code: 0, status: "completed" });
    expect(view.image_family).toBe("go");
    expect(view.verification).toMatchObject({ passed: true, reason: null, tests: { discovered: 5, passed: 5, failed: 0 } });
    expect(view.verification?.acceptance).toMatchObject({ failed: [], error: null });
    expect(view.verification?.acceptance?.passed).toHaveLength(6);
    // the acceptance case runner was compiled through an overlay, never written into the workspace
    expect(fs.existsSync(path.join(ws, ".mini_agent_acceptance"))).toBe(false);
    expect(fs.readFileSync(path.join(ws, "NOTES.md"))).toEqual(fs.readFileSync(path.join(WORDWRAP, "repo/NOTES.md")));
  });

  it("the Wrap-only 'fix' is green on its tests and refused on the hidden cases accented_pad and greek_column", async () => {
    const { view, out, code } = await runApprovingEverything(WORDWRAP, "replays/wrap-only.json");
    expect({ code, status: view.status }, out).toEqual({ code: 1, status: "failed" });
    expect(view.verification).toMatchObject({ passed: false, tests: { discovered: 5, passed: 5, failed: 0 } });
    expect([...(view.verification?.acceptance?.failed ?? [])].sort()).toEqual(["accented_pad", "greek_column"]);
  });

  it("a skipped test does not make the run green: go test says ok, the Verifier refuses the candidate tests (4 of 5 passed)", async () => {
    const { view, out, code } = await runApprovingEverything(WORDWRAP, "replays/skip-the-test.json");
    expect({ code, status: view.status }, out).toEqual({ code: 1, status: "failed" });
    expect(view.verification).toMatchObject({ passed: false, reason: "verification_failed", tests: { discovered: 5, passed: 4, failed: 0, exit_code: 0 } });
  });
});
