import { execFileSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiResponse, ErrorBody } from "../../daemon/src/contracts/api.js";
import { rawRequest, REPO, runClient, Started, type DaemonHandle } from "./harness.js";

/**
 * Issue 10 items 5 and 6 through the real daemon and client: a bad control
 * folder is a 400 with a reason (never a 500, never copied), a container run
 * whose pinned image is missing is refused before anything exists, and a
 * refused create leaves nothing in the state dir or the ledger.
 */
const FIXTURE = path.join(REPO, "fixtures/linkcheck");
const TASK = JSON.parse(fs.readFileSync(path.join(FIXTURE, "task.json"), "utf8")) as Record<string, unknown>;
const started = new Started();
let root: string;
let stateDir: string;
let d: DaemonHandle;

// small limits, so the size and count refusals need no large folder
const MAX_BYTES = 64 * 1024;
const MAX_FILES = 50;

beforeAll(async () => {
  root = started.dir("ma-e2e-create-");
  stateDir = path.join(root, "state");
  // no image lock in this state dir: every container run must be refused at create
  d = await started.daemon({ stateDir, args: ["--control-max-bytes", String(MAX_BYTES), "--control-max-files", String(MAX_FILES)] });
});
afterAll(async () => {
  await started.stopDaemons("SIGTERM");
  started.removeDirs();
});

/** A fresh copy of the linkcheck control folder, changed by `shape`. */
function controlDir(name: string, shape: (dir: string) => void = () => {}): string {
  const dir = path.join(root, name, "control");
  fs.cpSync(path.join(FIXTURE, "control"), dir, { recursive: true });
  shape(dir);
  return dir;
}

function workspace(name: string): string {
  const ws = path.join(root, name, "ws");
  fs.cpSync(path.join(FIXTURE, "repo"), ws, { recursive: true });
  return ws;
}

async function create(control: string, ws: string, backend: "trusted_local" | "container" = "trusted_local") {
  const body = { workspace: ws, task_spec: TASK, control_dir: control, replay_path: path.join(FIXTURE, "replay.json"), trust_replay_file: true, backend };
  return rawRequest(d.socketPath, "POST", "/v1/runs", JSON.stringify(body));
}

async function expectRefused(control: string, ws: string, reason: string) {
  const r = await create(control, ws);
  expect(r.status, r.text).toBe(400);
  const err = ErrorBody.parse(r.json).error;
  expect([err.code, err.details?.control_dir]).toEqual(["invalid_request", reason]);
  expect(r.text).not.toMatch(/at .*\.[jt]s:\d+/);
  return err;
}

/** no run row, nothing in the state dir's control folder (no copy, no staging folder) */
async function expectNothingLeft() {
  const runs = ApiResponse.parse((await rawRequest(d.socketPath, "GET", "/v1/runs")).json);
  expect(runs.kind === "runs" && runs.runs).toEqual([]);
  const controlRoot = path.join(stateDir, "control");
  expect(fs.existsSync(controlRoot) ? fs.readdirSync(controlRoot) : []).toEqual([]);
}

describe("create-run refuses a bad control folder with 400 and copies nothing", () => {
  it("too many bytes: the limit is in the message and the details", async () => {
    const control = controlDir("big", (dir) => fs.writeFileSync(path.join(dir, "blob.bin"), Buffer.alloc(MAX_BYTES + 1)));
    const err = await expectRefused(control, workspace("big"), "too_large");
    expect(err.message).toContain(`more than ${MAX_BYTES} bytes`);
    expect(err.details).toMatchObject({ max_bytes: MAX_BYTES, max_files: MAX_FILES });
    await expectNothingLeft();
  });

  it("too many files and folders: the limit is in the message", async () => {
    const control = controlDir("many", (dir) => {
      for (let i = 0; i < MAX_FILES; i++) fs.writeFileSync(path.join(dir, `f${i}.txt`), "x");
    });
    const err = await expectRefused(control, workspace("many"), "too_many_files");
    expect(err.message).toContain(`more than ${MAX_FILES} files and folders`);
    await expectNothingLeft();
  });

  it("a socket inside (regression: 500), a fifo, a symlink: each named", async () => {
    const sockControl = controlDir("sock");
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(path.join(sockControl, "docs", "agent.sock"), resolve));
    try {
      const err = await expectRefused(sockControl, workspace("sock"), "not_regular");
      expect(err.details?.path).toBe("docs/agent.sock");
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    const fifo = controlDir("fifo", (dir) => execFileSync("mkfifo", [path.join(dir, "pipe")]));
    expect((await expectRefused(fifo, workspace("fifo"), "not_regular")).details?.path).toBe("pipe");
    const link = controlDir("link", (dir) => fs.symlinkSync("/etc/hostname", path.join(dir, "hostname")));
    expect((await expectRefused(link, workspace("link"), "not_regular")).details?.path).toBe("hostname");
    await expectNothingLeft();
  });

  it("the state dir itself, a folder inside it, and a folder that holds it (regression: the state dir gave 500)", async () => {
    const ws = workspace("state-case");
    await expectRefused(stateDir, ws, "state_dir");
    await expectRefused(path.join(stateDir, "logs"), ws, "state_dir");
    await expectRefused(root, ws, "state_dir");
    await expectNothingLeft();
  });

  it("a control folder inside the workspace, or around it", async () => {
    const ws = workspace("overlap");
    fs.cpSync(path.join(FIXTURE, "control"), path.join(ws, "hidden"), { recursive: true });
    await expectRefused(path.join(ws, "hidden"), ws, "overlaps_workspace");
    await expectRefused(path.dirname(ws), ws, "overlaps_workspace");
    await expectNothingLeft();
  });

  it("accepts a control folder within the limits and copies it into the run's control dir", async () => {
    const r = await create(controlDir("ok"), workspace("ok"));
    expect(r.status, r.text).toBe(201);
    const created = ApiResponse.parse(r.json);
    const runId = created.kind === "run" ? created.run.run_id : "";
    const copied = path.join(stateDir, "control", runId, "acceptance");
    expect(fs.readFileSync(path.join(copied, "acceptance.mjs"), "utf8")).toBe(fs.readFileSync(path.join(FIXTURE, "control", "acceptance.mjs"), "utf8"));
    expect(fs.readdirSync(path.join(stateDir, "control"))).toEqual([runId]);
    await rawRequest(d.socketPath, "POST", `/v1/runs/${runId}/cancel`, "{}");
  });
});

describe("create-run on the container backend without the pinned image", () => {
  it("the client exits 2 and says how to build the image; no workspace, no run, nothing in the state dir", async () => {
    const before = ApiResponse.parse((await rawRequest(d.socketPath, "GET", "/v1/runs")).json);
    const ws = path.join(root, "no-image", "ws");
    const r = await runClient(["run", "--fixture", FIXTURE, "--workspace", ws, "--socket", d.socketPath]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`npm run image:build -- --state-dir ${stateDir}`);
    expect(fs.existsSync(ws)).toBe(false);
    expect(ApiResponse.parse((await rawRequest(d.socketPath, "GET", "/v1/runs")).json)).toEqual(before);
    const controlRoot = path.join(stateDir, "control");
    expect(fs.readdirSync(controlRoot).filter((n) => !(before.kind === "runs" && before.runs.some((run) => run.run_id === n)))).toEqual([]);
  });
});
