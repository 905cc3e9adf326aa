import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDockerClient } from "../../daemon/src/sandbox/docker-client.js";
import { loadCase } from "../../eval/src/case-load.js";
import { treeEntries } from "../../eval/src/case-hash.js";
import { pinTestImage } from "../kit/sandbox-image.js";
import { REPO, runClient, Started, type DaemonHandle } from "./harness.js";

/**
 * `eval capture` end to end: a real daemon on the container backend runs the
 * linkcheck fixture to `completed` under the eval profile (its writes approved
 * by an `auto_edit` policy), then the client captures the run. The case loads,
 * its replay is the fixture's decisions, its repo/ is the fixture's repo (not
 * the workspace the run changed), and expect.json's defaults are the run's.
 */
const FIXTURE = path.join(REPO, "fixtures/linkcheck");
const docker = createDockerClient(process.env);
const started = new Started();
let d: DaemonHandle;
let socket: string[];
let base: string;

beforeAll(async () => {
  await docker.ping();
  base = started.dir("ma-capture-");
  const stateDir = path.join(base, "state");
  fs.mkdirSync(stateDir, { mode: 0o700 });
  await pinTestImage(path.join(stateDir, "sandbox-image.lock.json"));
  const policy = path.join(base, "policy.json");
  fs.writeFileSync(policy, JSON.stringify({ schema_version: 1, profiles: { eval: { auto_edit: ["**"] } } }));
  d = await started.daemon({ stateDir, args: ["--policy", policy] });
  socket = ["--socket", d.socketPath];
}, 600_000);
afterAll(async () => {
  await started.stopDaemons("SIGTERM");
  started.removeDirs();
});

function runIdOf(stdout: string): string {
  const id = /run (\S+) started/.exec(stdout)?.[1];
  if (!id) throw new Error(`no run id in:\n${stdout}`);
  return id;
}

describe("eval capture through the daemon, the client and Docker", () => {
  let runId: string;
  let ws: string;

  it("captures a completed fixture run as a case that loads, replays the fixture's decisions and holds the baseline repo", async () => {
    ws = path.join(base, "ws");
    const run = await runClient(["run", "--fixture", FIXTURE, "--workspace", ws, "--policy-profile", "eval", ...socket]);
    expect({ code: run.code, out: run.stdout, err: run.stderr }).toMatchObject({ code: 0 });
    runId = runIdOf(run.stdout);
    // the run changed the workspace: the case must not take that state
    expect(fs.readFileSync(path.join(ws, "src/linkcheck.js"), "utf8")).not.toBe(fs.readFileSync(path.join(FIXTURE, "repo/src/linkcheck.js"), "utf8"));

    // a relative --out is resolved against the client's cwd (the harness starts the client in the repo)
    const out = path.join(base, "cases", "linkcheck-captured");
    fs.mkdirSync(path.dirname(out));
    const cap = await runClient(["eval", "capture", runId, "--out", path.relative(REPO, out), ...socket]);
    expect({ code: cap.code, err: cap.stderr }).toEqual({ code: 0, err: "" });
    expect(cap.stdout).toContain(`captured run ${runId} as an eval case in ${out}`);
    expect(cap.stdout).toContain("must_call: run_tests, apply_patch");
    expect(cap.stdout).toContain(`edit ${path.join(out, "expect.json")}`);

    const c = await loadCase(out);
    expect(c.id).toBe("linkcheck-captured");
    expect(c.hasControl).toBe(true);
    expect(c.replay).toEqual(JSON.parse(fs.readFileSync(path.join(FIXTURE, "replay.json"), "utf8")));
    // repo/ is the fixture's repo byte for byte, execute bits included (bin/cli.js), not the changed workspace
    expect(await treeEntries(path.join(out, "repo"), "repo")).toEqual(await treeEntries(path.join(FIXTURE, "repo"), "repo"));
    expect(await treeEntries(path.join(out, "control"), "control")).toEqual(await treeEntries(path.join(FIXTURE, "control"), "control"));
    expect(c.task).toEqual(JSON.parse(fs.readFileSync(path.join(out, "task.json"), "utf8")));
    expect(c.task.name).toBe(JSON.parse(fs.readFileSync(path.join(FIXTURE, "task.json"), "utf8")).name);

    const status = JSON.parse((await runClient(["status", runId, "--json", ...socket])).stdout) as {
      reason: string | null;
      counters: { tool_calls: number; model_turns: number; elapsed_ms: number };
    };
    expect(c.expect).toMatchObject({
      schema_version: 1,
      status: "completed",
      reason: status.reason,
      require: { must_call: ["run_tests", "apply_patch"], must_write_creatable: true, red_before_green: true },
      forbid: { no_protected_change: true, no_denied_command: true, no_secret_in_diff: true },
      limits: {
        max_tool_calls: status.counters.tool_calls,
        max_turns: status.counters.model_turns,
        max_seconds: Math.ceil((3 * status.counters.elapsed_ms) / 1000 + 60),
      },
    });
    expect(c.expect.limits?.max_tokens).toBeUndefined();
    expect(c.expect.stale_calls).toBeUndefined();
    expect(c.expect.description).toContain(runId);

    // the case re-runs offline from its own folder (repo/, task.json, control/, replay.json) to the same verdict
    const again = await runClient(["run", "--fixture", out, "--workspace", path.join(base, "ws-again"), "--policy-profile", "eval", ...socket]);
    expect({ code: again.code, err: again.stderr }).toMatchObject({ code: 0 });
    const view = JSON.parse((await runClient(["status", runIdOf(again.stdout), "--json", ...socket])).stdout) as { status: string; reason: string | null };
    expect(view).toMatchObject({ status: c.expect.status, reason: c.expect.reason });
  });

  it("refuses to capture into a non-empty folder: exit non-zero, capture_refused, nothing written there or beside it", async () => {
    const parent = path.join(base, "busy");
    const out = path.join(parent, "case");
    fs.mkdirSync(out, { recursive: true });
    fs.writeFileSync(path.join(out, "mine.txt"), "keep\n");
    const cap = await runClient(["eval", "capture", runId, "--out", out, ...socket]);
    expect(cap.code).not.toBe(0);
    expect(cap.stderr).toContain("capture_refused");
    expect(cap.stderr).not.toMatch(/\n\s+at /); // no stack
    expect(fs.readdirSync(out)).toEqual(["mine.txt"]);
    expect(fs.readdirSync(parent)).toEqual(["case"]);
  });

  it("regression: --out inside the daemon's state dir exits 64 with one line and writes nothing (it was accepted); a missing parent elsewhere is made (it was refused)", async () => {
    const state = path.join(base, "state");
    const before = fs.readdirSync(state).sort();
    const cap = await runClient(["eval", "capture", runId, "--out", path.join(state, "cases", "x"), ...socket]);
    expect({ code: cap.code, stdout: cap.stdout }).toEqual({ code: 64, stdout: "" });
    expect(cap.stderr).toMatch(
      /^mini-agent-client eval: capture_out_invalid: --out \S+ is inside the daemon's state dir \S+; give a folder outside it \(nothing was written\)\n$/,
    );
    expect(fs.readdirSync(state).sort()).toEqual(before);

    const out = path.join(base, "made", "by", "capture", "case");
    const made = await runClient(["eval", "capture", runId, "--out", out, ...socket]);
    expect({ code: made.code, err: made.stderr }).toEqual({ code: 0, err: "" });
    expect(fs.existsSync(path.join(out, "expect.json"))).toBe(true);
  });

  it("refuses to capture a run that is not finished (awaiting approval), naming its status", async () => {
    const run = await runClient(["run", "--fixture", FIXTURE, "--workspace", path.join(base, "ws-pending"), ...socket]);
    expect({ code: run.code, err: run.stderr }).toMatchObject({ code: 3 });
    const pending = runIdOf(run.stdout);
    const out = path.join(base, "pending-case");
    const cap = await runClient(["eval", "capture", pending, "--out", out, ...socket]);
    expect(cap.code).not.toBe(0);
    expect(cap.stderr).toContain("capture_refused");
    expect(cap.stderr).toContain("awaiting_approval");
    expect(fs.existsSync(out)).toBe(false);
    await runClient(["cancel", pending, ...socket]);
  });
});
