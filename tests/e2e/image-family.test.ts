import fs from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { HealthBody } from "../../daemon/src/contracts/api.js";
import type { RunView } from "../../daemon/src/contracts/run-view.js";
import { createDockerClient } from "../../daemon/src/sandbox/docker-client.js";
import { pinTestImage } from "../kit/sandbox-image.js";
import { runClient, Started, stateDirIn } from "./harness.js";

/**
 * Regression: the daemon made ONE container executor, for the configured family, so a
 * task naming `image_family: "python"` still ran its tests in the node image. Through
 * the real daemon and client: the preset is `python3 -c …`, which prints a one-test TAP
 * report with the interpreter's version, and exists only in the python image. The same
 * task without a family runs in node, where python3 does not exist.
 */
const docker = createDockerClient(process.env);
const started = new Started();
let imageLock: string;

// prints what `node --test --test-reporter=tap` prints for one passing test, plus the interpreter it ran in
const PY_TAP =
  "import sys; print('TAP version 13'); print('# python ' + sys.version.split()[0]); print('ok 1 - runs in python'); print('1..1'); " +
  "[print('# ' + k) for k in ['tests 1', 'suites 0', 'pass 1', 'fail 0', 'cancelled 0', 'skipped 0', 'todo 0', 'duration_ms 1.0']]";

function spec(family?: "python") {
  return {
    schema_version: 1,
    name: "family-probe",
    task: "run the tests",
    writable: ["notes.txt"],
    test_presets: { py: { command: ["python3", "-c", PY_TAP], files: [], parser: "node_test", timeout_seconds: 60 } },
    verify_preset: "py",
    ...(family && { image_family: family }),
  };
}

const REPLAY = {
  schema_version: 1,
  decisions: [
    { kind: "tool", call: { call_id: "call_01_tests", name: "run_tests", arguments: { preset: "py" } } },
    { kind: "final", text: "done" },
  ],
};

beforeAll(async () => {
  await docker.ping();
  imageLock = path.join(started.dir("ma-family-image-"), "sandbox-image.lock.json");
  await pinTestImage(imageLock, "node", docker);
  await pinTestImage(imageLock, "python", docker);
}, 900_000);

afterEach(async () => {
  await started.stopDaemons("SIGTERM");
});

afterAll(async () => {
  await started.stopDaemons("SIGKILL");
  started.removeDirs();
});

async function runWith(family?: "python") {
  const root = started.dir("ma-family-");
  const stateDir = stateDirIn(root, imageLock);
  const d = await started.daemon({ stateDir });
  const ws = path.join(root, "ws");
  fs.mkdirSync(ws);
  fs.writeFileSync(path.join(ws, "notes.txt"), "x\n");
  fs.writeFileSync(path.join(root, "task.json"), JSON.stringify(spec(family)));
  fs.writeFileSync(path.join(root, "replay.json"), JSON.stringify(REPLAY));
  const socket = ["--socket", d.socketPath];
  const r = await runClient(["run", "--workspace", ws, "--task-spec", path.join(root, "task.json"), "--replay", path.join(root, "replay.json"), ...socket]);
  const runId = /run (\S+) started/.exec(r.stdout)?.[1] ?? "";
  expect(runId, r.stdout + r.stderr).not.toBe("");
  const s = await runClient(["status", runId, "--json", ...socket]);
  const view = JSON.parse(s.stdout.slice(s.stdout.indexOf("{"))) as RunView;
  const trace = await runClient(["trace", runId, "--jsonl", ...socket]);
  const observed = trace.stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { type: string; payload: Record<string, unknown> })
    .find((e) => e.type === "tool_observed" && e.payload.tool === "run_tests");
  return { view, observed: observed?.payload ?? null, out: r.stdout + r.stderr, socket: d.socketPath };
}

describe("a run's image family picks its sandbox image (real daemon, real client)", () => {
  it("regression: a python task ran its tests in the node image; now run_tests and the Verifier both run python3", async () => {
    const { view, observed, out, socket } = await runWith("python");
    expect(view.image_family, out).toBe("python");
    expect(observed, out + JSON.stringify(observed)).toMatchObject({ discovered: 1, passed: 1, failed: 0 });
    // the Verifier's fresh sandbox ran the same python3 command
    expect(view.verification?.tests, out).toMatchObject({ discovered: 1, passed: 1, failed: 0, exit_code: 0 });
    // health names every family: python is pinned but not probed, go is not even pinned
    const h = JSON.parse((await runClient(["health", "--json", "--socket", socket])).stdout) as HealthBody;
    // never probed is "no_report", not "report_stale" (a stale report is one that exists)
    expect(h.families).toMatchObject({ python: { verdict: "none", reason: "no_report" }, go: { verdict: "none", reason: "image_missing" } });
  });

  it("the same task without a family runs in node, where python3 does not exist", async () => {
    const { view, observed, out } = await runWith();
    expect(view.image_family, out).toBe("node");
    expect(observed?.passed ?? 0, out).toBe(0);
    expect(view.verification?.tests.passed ?? 0, out).toBe(0);
    expect(view.status).toBe("failed");
  });
});
