import fs from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { instanceIdFor } from "../../daemon/src/config/state-dir.js";
import { ApiResponse, ErrorBody } from "../../daemon/src/contracts/api.js";
import { EvalReport } from "../../daemon/src/contracts/eval-report.js";
import type { RunView } from "../../daemon/src/contracts/run-view.js";
import { createDockerClient } from "../../daemon/src/sandbox/docker-client.js";
import { INSTANCE_LABEL, labelFilter, PURPOSE_LABEL } from "../../daemon/src/sandbox/labels.js";
import { pinTestImage } from "../kit/sandbox-image.js";
import { rawRequest, REPO, runClient, Started, stateDirIn } from "./harness.js";

/**
 * Issue 13: the OCI runtime is a per-run choice. Through the real daemon (started
 * with its default runtime, runc), the real client and the real engine, where runsc
 * (gVisor) is registered: a run that asks for runsc runs every sandbox of its own
 * (warm session, the Verifier's fresh one, pool members made for it) under runsc,
 * also after a daemon restart and a resume; an eval suite asked to run under runsc
 * does the same; a runtime the daemon does not know is refused before anything exists.
 * The runtime is read from the engine (HostConfig.Runtime of every container the
 * daemon makes while the run is active), never from what mini-agent says of itself.
 */
const docker = createDockerClient(process.env);
const started = new Started();
let imageLock: string;

// one passing test, printed as `node --test` prints TAP, after 1.5 s so the sandbox is there to inspect
const SLOW_TAP =
  "setTimeout(() => { for (const l of ['TAP version 13', 'ok 1 - slow', '1..1', '# tests 1', '# suites 0', '# pass 1', '# fail 0', " +
  "'# cancelled 0', '# skipped 0', '# todo 0', '# duration_ms 1500']) console.log(l); }, 1500)";

const SPEC = {
  schema_version: 1,
  name: "runtime-probe",
  task: "add a note and run the tests",
  writable: ["notes/*.txt"],
  creatable: ["notes/*.txt"],
  test_presets: { slow: { command: ["node", "-e", SLOW_TAP], files: [], parser: "node_test", timeout_seconds: 120 } },
  verify_preset: "slow",
};

const REPLAY = {
  schema_version: 1,
  decisions: [
    { kind: "tool", call: { call_id: "call_01_note", name: "apply_patch", arguments: { path: "notes/a.txt", version: "absent", old: "", new: "runsc\n" } } },
    { kind: "tool", call: { call_id: "call_02_tests", name: "run_tests", arguments: { preset: "slow" } } },
    { kind: "final", text: "done" },
  ],
};

/** Every container of one daemon instance, inspected once each: its purpose and the runtime the ENGINE says it has. */
function watchRuntimes(stateDir: string) {
  const seen = new Map<string, { purpose: string; runtime: string; phase: string }>();
  let phase = "start";
  let stopped = false;
  const label = [labelFilter(INSTANCE_LABEL, instanceIdFor(stateDir))];
  const loop = (async () => {
    while (!stopped) {
      try {
        for (const c of await docker.listContainers({ all: true, filters: { label } })) {
          if (seen.has(c.Id)) continue;
          try {
            const info = await docker.getContainer(c.Id).inspect();
            seen.set(c.Id, { purpose: c.Labels?.[PURPOSE_LABEL] ?? "?", runtime: String(info.HostConfig.Runtime), phase });
          } catch {
            // removed between the list and the inspect: its successor is seen on the next round
          }
        }
      } catch {
        // the engine was busy; try again
      }
      await new Promise((r) => setTimeout(r, 150));
    }
  })();
  return {
    phase: (p: string) => void (phase = p),
    async stop() {
      stopped = true;
      await loop;
      return [...seen.values()];
    },
  };
}

async function statusOf(runId: string, socket: string): Promise<RunView> {
  const s = await runClient(["status", runId, "--json", "--socket", socket]);
  return JSON.parse(s.stdout.slice(s.stdout.indexOf("{"))) as RunView;
}

async function leftovers(stateDir: string) {
  return docker.listContainers({ all: true, filters: { label: [labelFilter(INSTANCE_LABEL, instanceIdFor(stateDir))] } });
}

beforeAll(async () => {
  await docker.ping();
  const runtimes = ((await docker.info()) as { Runtimes?: Record<string, unknown> }).Runtimes ?? {};
  if (!("runsc" in runtimes)) throw new Error("these tests need runsc registered with the engine (`npm run docker:ensure`)");
  imageLock = path.join(started.dir("ma-runtime-image-"), "sandbox-image.lock.json");
  await pinTestImage(imageLock, "node", docker);
}, 900_000);
afterEach(async () => started.stopDaemons("SIGTERM"));
afterAll(async () => {
  await started.stopDaemons("SIGKILL");
  started.removeDirs();
});

describe("per-run --runtime on a runc daemon (real daemon, client and engine)", () => {
  it("regression: --runtime runsc was refused or ignored; the warm session and, after a daemon restart and resume, the Verifier run under runsc", async () => {
    const root = started.dir("ma-runtime-run-");
    const stateDir = stateDirIn(root, imageLock);
    const ws = path.join(root, "ws");
    fs.mkdirSync(ws);
    fs.writeFileSync(path.join(ws, "README.md"), "a workspace\n");
    fs.writeFileSync(path.join(root, "task.json"), JSON.stringify(SPEC));
    fs.writeFileSync(path.join(root, "replay.json"), JSON.stringify(REPLAY));
    const watch = watchRuntimes(stateDir);
    try {
      const d1 = await started.daemon({ stateDir });
      // two turns: the write and the tests; the final answer (and so the Verifier) waits for the resume
      const args = ["--task-spec", path.join(root, "task.json"), "--replay", path.join(root, "replay.json"), "--policy-profile", "eval"];
      const r = await runClient(["run", "--workspace", ws, ...args, "--runtime", "runsc", "--max-turns", "2", "--socket", d1.socketPath]);
      const runId = /run (\S+) started/.exec(r.stdout)?.[1] ?? "";
      expect({ code: r.code, out: r.stdout + r.stderr }).toMatchObject({ code: 5 });
      expect(r.stdout).toContain("runtime runsc");
      const first = await statusOf(runId, d1.socketPath);
      expect(first).toMatchObject({ status: "budget_exhausted", runtime: "runsc", tests: { discovered: 1, passed: 1 } });

      // a new daemon process (runc again): it knows the run's runtime only from the ledger
      await d1.stop("SIGTERM");
      watch.phase("resumed");
      const d2 = await started.daemon({ stateDir });
      const resumed = await runClient(["resume", runId, "--max-turns", "5", "--socket", d2.socketPath]);
      expect({ code: resumed.code, out: resumed.stdout + resumed.stderr }).toMatchObject({ code: 0 });
      const done = await statusOf(runId, d2.socketPath);
      expect(done).toMatchObject({ status: "completed", runtime: "runsc" });
      expect(done.verification?.tests).toMatchObject({ discovered: 1, passed: 1, failed: 0 });

      const trace = await runClient(["trace", runId, "--jsonl", "--socket", d2.socketPath]);
      const created = trace.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { type: string; payload: Record<string, unknown> })
        .find((e) => e.type === "run_created");
      expect(created?.payload).toMatchObject({ backend: "container", runtime: "runsc" });
      await d2.stop("SIGTERM");
    } finally {
      const seen = await watch.stop();
      // the engine says so: every sandbox this runc daemon made for the run, before and after the restart, is runsc
      expect(seen.length, JSON.stringify(seen)).toBeGreaterThan(0);
      expect(seen.filter((s) => s.phase === "resumed").length, JSON.stringify(seen)).toBeGreaterThan(0);
      expect(
        seen.filter((s) => s.runtime !== "runsc"),
        JSON.stringify(seen),
      ).toEqual([]);
    }
    expect(await leftovers(stateDir)).toEqual([]);
  }, 900_000);

  it("eval run evals/linkcheck-canonical --runtime runsc on a runc daemon: the case runs under runsc, passes, and the report says so", async () => {
    const root = started.dir("ma-runtime-eval-");
    const stateDir = stateDirIn(root, imageLock);
    const out = path.join(root, "out");
    const watch = watchRuntimes(stateDir);
    let seen: Array<{ runtime: string }> = [];
    try {
      const d = await started.daemon({ stateDir });
      const r = await runClient(["eval", "run", path.join(REPO, "evals/linkcheck-canonical"), "--output", out, "--runtime", "runsc", "--socket", d.socketPath]);
      expect({ code: r.code, out: r.stdout + r.stderr }).toMatchObject({ code: 0 });
      const report = EvalReport.parse(JSON.parse(fs.readFileSync(path.join(out, "eval-report.json"), "utf8")));
      expect(report.settings.runtime).toBe("runsc");
      expect(report.cases.map((c) => [c.id, c.verdict, c.runtime])).toEqual([["linkcheck-canonical", "passed", "runsc"]]);
      await d.stop("SIGTERM");
    } finally {
      seen = await watch.stop();
    }
    expect(seen.length).toBeGreaterThan(0);
    expect(
      seen.filter((s) => s.runtime !== "runsc"),
      JSON.stringify(seen),
    ).toEqual([]);
    expect(await leftovers(stateDir)).toEqual([]);
  }, 900_000);

  it("a runtime the daemon does not know, or one with trusted_local, is refused with 400 before anything is created", async () => {
    const root = started.dir("ma-runtime-refused-");
    const stateDir = stateDirIn(root, imageLock);
    const d = await started.daemon({ stateDir });
    const fixture = path.join(REPO, "fixtures/linkcheck");
    for (const [ws, extra, says] of [
      [path.join(root, "ws-kata"), { backend: "container", runtime: "kata" }, "runtime"],
      [path.join(root, "ws-local"), { backend: "trusted_local", runtime: "runsc" }, "trusted_local"],
    ] as const) {
      const res = await rawRequest(d.socketPath, "POST", "/v1/runs", JSON.stringify({ workspace: ws, fixture_dir: fixture, ...extra }));
      expect(res.status, res.text).toBe(400);
      const err = ErrorBody.parse(res.json).error;
      expect(err.code).toBe("invalid_request");
      expect(err.message).toContain(says);
      expect(res.text).not.toMatch(/at .*\.[jt]s:\d+/);
      // the fixture's repo/ was not copied: the workspace does not exist
      expect(fs.existsSync(ws)).toBe(false);
    }
    const runs = ApiResponse.parse((await rawRequest(d.socketPath, "GET", "/v1/runs")).json);
    expect(runs.kind === "runs" && runs.runs).toEqual([]);
    expect(await leftovers(stateDir)).toEqual([]);
  }, 300_000);
});
