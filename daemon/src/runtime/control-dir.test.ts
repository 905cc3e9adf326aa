import { execFileSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isMiniAgentError } from "../errors.js";
import { checkControlDir, copyControlDir, sweepControlRoot, type ControlLimits } from "./control-dir.js";

let root: string;
let stateDir: string;
let control: string;
let workspace: string;
const roomy: ControlLimits = { maxBytes: 1024 * 1024, maxFiles: 100 };

beforeEach(() => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mini-agent-control-")));
  stateDir = path.join(root, "state");
  control = path.join(root, "task", "control");
  workspace = path.join(root, "ws");
  for (const d of [stateDir, path.join(control, "cases"), workspace]) fs.mkdirSync(d, { recursive: true });
  fs.writeFileSync(path.join(control, "acceptance.mjs"), "console.log(1)\n");
  fs.writeFileSync(path.join(control, "cases", "a.json"), "{}");
  fs.writeFileSync(path.join(control, "run.sh"), "#!/bin/sh\n", { mode: 0o755 });
  fs.writeFileSync(path.join(control, "empty"), "");
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

async function refusal(p: Promise<unknown>): Promise<{ code: string; message: string; details: Record<string, unknown> }> {
  try {
    await p;
  } catch (err) {
    if (isMiniAgentError(err)) return { code: err.code, message: err.message, details: err.details ?? {} };
    throw err;
  }
  throw new Error("expected a refusal");
}

const check = (dir = control, limits = roomy, ws = workspace) => checkControlDir(dir, { stateDir, workspace: ws, limits });

describe("control dir: checked before anything is copied", () => {
  it("accepts regular files and folders, and copies exactly them (executable bit kept, nothing group/other)", async () => {
    const checked = await check();
    expect(checked.entries.map((e) => e.rel)).toEqual(["acceptance.mjs", "cases", "cases/a.json", "empty", "run.sh"]);
    expect(checked.bytes).toBe(15 + 2 + 10);
    const dest = path.join(stateDir, "control", "run_1", "acceptance");
    fs.mkdirSync(path.dirname(dest), { recursive: true });
    await copyControlDir(checked, dest);
    expect(fs.readFileSync(path.join(dest, "cases", "a.json"), "utf8")).toBe("{}");
    expect(fs.readFileSync(path.join(dest, "empty"), "utf8")).toBe("");
    expect(fs.statSync(path.join(dest, "run.sh")).mode & 0o777).toBe(0o700);
    expect(fs.statSync(path.join(dest, "acceptance.mjs")).mode & 0o777).toBe(0o600);
  });

  it("refuses a socket, a fifo and a symlink inside, naming the entry (regression: a socket gave 500)", async () => {
    const sock = path.join(control, "cases", "s.sock");
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(sock, resolve));
    try {
      const r = await refusal(check());
      expect([r.code, r.details.control_dir, r.details.path]).toEqual(["invalid_request", "not_regular", "cases/s.sock"]);
      expect(r.message).toContain("cases/s.sock is a socket");
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    fs.rmSync(sock, { force: true });
    execFileSync("mkfifo", [path.join(control, "pipe")]);
    expect((await refusal(check())).message).toContain("pipe is a fifo");
    fs.rmSync(path.join(control, "pipe"));
    fs.symlinkSync("/etc/passwd", path.join(control, "link"));
    const link = await refusal(check());
    expect([link.details.control_dir, link.details.path]).toEqual(["not_regular", "link"]);
    expect(link.message).toContain("link is a symlink");
  });

  it("refuses more bytes or more files and folders than the limits, and says the limits", async () => {
    const big = await refusal(check(control, { maxBytes: 20, maxFiles: 100 }));
    expect([big.code, big.details.control_dir, big.details.max_bytes, big.details.max_files]).toEqual(["invalid_request", "too_large", 20, 100]);
    expect(big.message).toContain("more than 20 bytes");
    const many = await refusal(check(control, { maxBytes: 1024, maxFiles: 3 }));
    expect([many.details.control_dir, many.details.max_files]).toEqual(["too_many_files", 3]);
    expect(many.message).toContain("more than 3 files and folders");
    // exactly at the limits is fine
    expect((await check(control, { maxBytes: 27, maxFiles: 5 })).entries).toHaveLength(5);
  });

  it("refuses the state dir itself, anything inside it, and a folder that holds it (regression: the state dir gave 500)", async () => {
    fs.mkdirSync(path.join(stateDir, "control", "run_x"), { recursive: true });
    for (const dir of [stateDir, path.join(stateDir, "control", "run_x"), root]) {
      const r = await refusal(check(dir));
      expect([r.code, r.details.control_dir]).toEqual(["invalid_request", "state_dir"]);
    }
    // through a symlink too: the realpath is compared
    fs.symlinkSync(stateDir, path.join(root, "alias"));
    expect((await refusal(check(path.join(root, "alias")))).details.control_dir).toBe("state_dir");
  });

  it("refuses a control dir that overlaps the workspace, either way round, also for a workspace yet to be made", async () => {
    for (const [dir, ws] of [
      [control, path.join(control, "cases")],
      [path.join(workspace), workspace],
      [control, path.join(root, "task")],
      [control, path.join(control, "new-ws")],
    ] as const) {
      expect((await refusal(check(dir, roomy, ws))).details.control_dir).toBe("overlaps_workspace");
    }
    expect((await refusal(check(path.join(root, "nope")))).details.control_dir).toBe("missing");
    expect((await refusal(check(path.join(control, "empty")))).details.control_dir).toBe("not_a_directory");
  });

  it("refuses a file swapped for a fifo after the check, and leaves no half copy behind", async () => {
    const checked = await check();
    fs.rmSync(path.join(control, "cases", "a.json"));
    execFileSync("mkfifo", [path.join(control, "cases", "a.json")]);
    const dest = path.join(stateDir, "staging", "acceptance");
    fs.mkdirSync(path.dirname(dest), { recursive: true });
    const r = await refusal(copyControlDir(checked, dest));
    expect([r.details.control_dir, r.details.path]).toEqual(["changed", "cases/a.json"]);
    expect(fs.readdirSync(path.dirname(dest))).toEqual([]);
  });
});

describe("control root sweep at start-up", () => {
  it("removes staging folders and run folders the ledger does not know, and nothing else", async () => {
    const controlRoot = path.join(stateDir, "control");
    for (const n of [".creating-run_aa11", "run_bb22", "run_cc33", "notes"]) fs.mkdirSync(path.join(controlRoot, n), { recursive: true });
    expect((await sweepControlRoot(controlRoot, new Set(["run_cc33"]))).sort()).toEqual([".creating-run_aa11", "run_bb22"]);
    expect(fs.readdirSync(controlRoot).sort()).toEqual(["notes", "run_cc33"]);
    expect(await sweepControlRoot(path.join(root, "absent"), new Set())).toEqual([]);
  });
});
