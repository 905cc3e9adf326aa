import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { instanceIdFor } from "../../daemon/src/config/state-dir.js";
import { CaseResult, EvalReport } from "../../daemon/src/contracts/eval-report.js";
import { createDockerClient } from "../../daemon/src/sandbox/docker-client.js";
import { INSTANCE_LABEL, labelFilter } from "../../daemon/src/sandbox/labels.js";
import { pinTestImage } from "../kit/sandbox-image.js";
import { binArgs, cleanEnv, REPO, runClient, Started, stateDirIn } from "./harness.js";

/**
 * `eval run` end to end: a spawned daemon on the container backend (real
 * Docker), the real client, a temp suite of three cases built from the
 * linkcheck fixture:
 *   canonical     the canonical fix, expected completed: passed
 *   always-empty  a fix that is wrong, expected to fail as it really does: passed
 *   needs-human   the canonical fix, but its workspace policy switches the eval
 *                 profile's auto_edit_writable off, so the first write asks a
 *                 person: cancelled at once, needs_human (never a hang)
 */
const FIXTURE = path.join(REPO, "fixtures/linkcheck");
const docker = createDockerClient(process.env);
const started = new Started();
let imageLock: string;

beforeAll(async () => {
  await docker.ping();
  imageLock = path.join(started.dir("ma-eval-image-"), "sandbox-image.lock.json");
  await pinTestImage(imageLock);
}, 600_000);
afterEach(async () => started.stopDaemons("SIGTERM"));
afterAll(async () => {
  await started.stopDaemons("SIGKILL");
  started.removeDirs();
});

function makeCase(suite: string, id: string, opts: { replay?: string; expect: Record<string, unknown>; workspacePolicy?: object }): void {
  const dir = path.join(suite, id);
  fs.mkdirSync(dir, { recursive: true });
  for (const f of ["repo", "task.json", "control"]) fs.cpSync(path.join(FIXTURE, f), path.join(dir, f), { recursive: true });
  fs.copyFileSync(path.join(FIXTURE, opts.replay ?? "replay.json"), path.join(dir, "replay.json"));
  fs.writeFileSync(path.join(dir, "expect.json"), JSON.stringify({ schema_version: 1, ...opts.expect }));
  if (opts.workspacePolicy) {
    fs.mkdirSync(path.join(dir, "repo/.mini-agent"), { recursive: true });
    fs.writeFileSync(path.join(dir, "repo/.mini-agent/policy.json"), JSON.stringify(opts.workspacePolicy));
  }
}

function makeSuite(base: string): string {
  const suite = path.join(base, "suite");
  const fixed = {
    require: { must_call: ["run_tests"], must_write_creatable: true, red_before_green: true },
    forbid: { no_protected_change: true, no_denied_command: true },
  };
  makeCase(suite, "canonical", { expect: { status: "completed", ...fixed, limits: { max_tool_calls: 20 } } });
  makeCase(suite, "always-empty", {
    replay: "replays/always-empty.json",
    expect: { status: "failed", reason: "verification_failed", forbid: { no_protected_change: true } },
  });
  makeCase(suite, "needs-human", { expect: { status: "completed", ...fixed }, workspacePolicy: { auto_edit_writable: false } });
  return suite;
}

const readResult = (out: string, id: string) => CaseResult.parse(JSON.parse(fs.readFileSync(path.join(out, "cases", `${id}.json`), "utf8")));
const readReport = (out: string) => EvalReport.parse(JSON.parse(fs.readFileSync(path.join(out, "eval-report.json"), "utf8")));

async function leftovers(stateDir: string) {
  return docker.listContainers({ all: true, filters: { label: [labelFilter(INSTANCE_LABEL, instanceIdFor(stateDir))] } });
}

async function daemonIn(stateDir: string) {
  return started.daemon({ stateDir });
}

describe("eval run through the daemon, the client and Docker", () => {
  it("judges three cases at concurrency 2 (passed, expected failure, needs_human), skips them when run again, re-runs them with --rerun", async () => {
    const base = started.dir("ma-eval-");
    const stateDir = stateDirIn(base, imageLock);
    const suite = makeSuite(base);
    const out = path.join(base, "out");
    const d = await daemonIn(stateDir);
    const args = ["eval", "run", suite, "--output", out, "--concurrency", "2", "--socket", d.socketPath];

    const first = await runClient(args);
    // one case needs a human: not every case passed
    expect({ code: first.code, stderr: first.stderr }).toMatchObject({ code: 1, stderr: "" });
    const report = readReport(out);
    // the failed rules are in the message when a verdict is not as expected
    expect(
      Object.fromEntries(report.cases.map((c) => [c.id, c.verdict])),
      JSON.stringify(report.cases.map((c) => [c.id, c.rules.filter((r) => !r.passed)])),
    ).toEqual({ "always-empty": "passed", canonical: "passed", "needs-human": "needs_human" });
    expect(report.settings).toEqual({ model: "replay", runtime: "runc", policy_profile: "eval", concurrency: 2 });
    expect(report.aggregates).toMatchObject({ cases: 3, passed: 2, needs_human: 1, rule_failures: { status: 1 } });
    const canonical = readResult(out, "canonical");
    // both writes were approved by the eval profile, through the recorded approval path
    expect(canonical).toMatchObject({ status: "completed", prompts_by_policy: 2, attempts: 1, verifier_rejections: 0 });
    expect(fs.readFileSync(path.join(out, "traces/canonical.jsonl"), "utf8")).toContain('"by":"policy:eval:auto_edit_writable"');
    expect(fs.readFileSync(path.join(out, "diffs/canonical.diff"), "utf8")).toContain("tests/test_agent_nested.js");
    expect(readResult(out, "always-empty")).toMatchObject({ status: "failed", reason: "verification_failed", verifier_rejections: 1 });
    expect(readResult(out, "needs-human")).toMatchObject({ status: "cancelled", prompts_by_policy: 0 });
    // one line per finished case (no terminal), then the summary
    expect(first.stdout.split("\n").filter((l) => /^\[\d\/3\] /.test(l))).toHaveLength(3);
    // every case's workspace is gone once judged
    expect(fs.readdirSync(path.join(out, "workspaces"))).toEqual([]);

    const runIds = report.cases.map((c) => c.run_id);
    const again = await runClient([...args, "--json"]);
    expect(again.code).toBe(1);
    const lines = again.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { kind: string });
    // nothing ran: no case line, only the summary
    expect(lines.map((l) => l.kind)).toEqual(["summary"]);
    expect(readReport(out).cases.map((c) => c.run_id)).toEqual(runIds);

    const rerun = await runClient([...args, "--rerun"]);
    expect(rerun.code).toBe(1);
    const after = readReport(out);
    for (const [i, c] of after.cases.entries()) expect(c.run_id).not.toBe(runIds[i]);
    expect(after.cases.map((c) => c.attempts)).toEqual([1, 1, 1]);

    // another runtime on the same output folder is refused (settings.json), naming both, and nothing runs;
    // --runtime itself is a per-run choice (tests/e2e/run-runtime.test.ts runs a case under runsc on a runc daemon)
    const runsc = await runClient([...args, "--runtime", "runsc"]);
    expect(runsc.code).toBe(1);
    expect(runsc.stderr).toMatch(/holds an eval run with runtime runc; this one has runtime runsc/);
    expect(readReport(out).cases.map((c) => c.run_id)).toEqual(after.cases.map((c) => c.run_id));

    await d.stop("SIGTERM");
    expect(await leftovers(stateDir)).toEqual([]);
  }, 900_000);

  it("regression: a case interrupted by a daemon SIGKILL is re-run from a fresh workspace with attempts 2 and appears once", async () => {
    const base = started.dir("ma-eval-kill-");
    const stateDir = stateDirIn(base, imageLock);
    const suite = makeSuite(base);
    const out = path.join(base, "out");
    const d1 = await daemonIn(stateDir);
    const args = ["eval", "run", suite, "--output", out, "--socket", d1.socketPath];

    const proc = spawn(process.execPath, [...binArgs("client"), ...args], { cwd: REPO, env: cleanEnv(), stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    proc.stderr.on("data", (b: Buffer) => (stderr += b.toString()));
    const exited = new Promise<number>((resolve) => proc.on("exit", (c) => resolve(c ?? -1)));
    // the first case (always-empty, in id order) has a run in the daemon: kill the daemon under it
    const startedFile = path.join(out, "started", "always-empty.json");
    for (let i = 0; ; i++) {
      if (fs.existsSync(startedFile) && (JSON.parse(fs.readFileSync(startedFile, "utf8")) as { run_id: string | null }).run_id !== null) break;
      if (i > 3000) throw new Error("the first case never started");
      await new Promise((r) => setTimeout(r, 100));
    }
    const killedRun = (JSON.parse(fs.readFileSync(startedFile, "utf8")) as { run_id: string }).run_id;
    await d1.stop("SIGKILL");
    const code = await exited;
    expect({ code, stderr }).toMatchObject({ code: 2 });
    expect(stderr).toContain("Resume with the same command");
    expect(fs.existsSync(path.join(out, "cases", "always-empty.json"))).toBe(false);
    expect(fs.existsSync(path.join(out, "eval-report.json"))).toBe(false);

    const d2 = await daemonIn(stateDir);
    const resumed = await runClient(["eval", "run", suite, "--output", out, "--socket", d2.socketPath]);
    expect({ code: resumed.code, stderr: resumed.stderr }).toMatchObject({ code: 1, stderr: "" });
    const report = readReport(out);
    expect(report.cases.map((c) => c.id)).toEqual(["always-empty", "canonical", "needs-human"]);
    const interrupted = report.cases.find((c) => c.id === "always-empty")!;
    expect(interrupted).toMatchObject({ attempts: 2, verdict: "passed" });
    expect(interrupted.run_id).not.toBe(killedRun);
    expect(report.cases.filter((c) => c.id !== "always-empty").map((c) => c.attempts)).toEqual([1, 1]);
    expect(fs.readdirSync(path.join(out, "workspaces"))).toEqual([]);

    await d2.stop("SIGTERM");
    expect(await leftovers(stateDir)).toEqual([]);
  }, 900_000);
});
