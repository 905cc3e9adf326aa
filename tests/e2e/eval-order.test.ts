import fs from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { instanceIdFor } from "../../daemon/src/config/state-dir.js";
import { EvalReport } from "../../daemon/src/contracts/eval-report.js";
import { createDockerClient } from "../../daemon/src/sandbox/docker-client.js";
import { INSTANCE_LABEL, labelFilter } from "../../daemon/src/sandbox/labels.js";
import { pinTestImage } from "../kit/sandbox-image.js";
import { REPO, runClient, Started } from "./harness.js";

/**
 * The order `eval run` starts cases in, seen from outside: a spawned daemon on
 * real Docker, the real client at concurrency 1 (one worker, so the finish
 * order is the start order), two linkcheck cases whose names sort the short
 * one first.
 */
const FIXTURE = path.join(REPO, "fixtures/linkcheck");
const docker = createDockerClient(process.env);
const started = new Started();
let imageLock: string;

beforeAll(async () => {
  await docker.ping();
  imageLock = path.join(started.dir("ma-eval-order-image-"), "sandbox-image.lock.json");
  await pinTestImage(imageLock);
}, 600_000);
afterEach(async () => started.stopDaemons("SIGTERM"));
afterAll(async () => {
  await started.stopDaemons("SIGKILL");
  started.removeDirs();
});

function makeCase(suite: string, id: string, replay: string, expect: Record<string, unknown>): void {
  const dir = path.join(suite, id);
  fs.mkdirSync(dir, { recursive: true });
  for (const f of ["repo", "task.json", "control"]) fs.cpSync(path.join(FIXTURE, f), path.join(dir, f), { recursive: true });
  fs.copyFileSync(path.join(FIXTURE, replay), path.join(dir, "replay.json"));
  fs.writeFileSync(path.join(dir, "expect.json"), JSON.stringify({ schema_version: 1, ...expect }));
}

describe("eval run's case order", () => {
  it("regression: the longer case is started first although its name sorts last (started last, it ran alone while other workers idled)", async () => {
    const base = started.dir("ma-eval-order-");
    const stateDir = path.join(base, "state");
    fs.mkdirSync(stateDir, { mode: 0o700 });
    fs.copyFileSync(imageLock, path.join(stateDir, "sandbox-image.lock.json"));
    const suite = path.join(base, "suite");
    // final at once: only the Verifier's runs
    makeCase(suite, "a-short", "replays/final-without-work.json", { status: "failed", reason: "verification_failed" });
    // two run_tests before the Verifier's runs
    makeCase(suite, "b-long", "replay.json", { status: "completed" });
    const out = path.join(base, "out");
    const d = await started.daemon({ stateDir });

    const r = await runClient(["eval", "run", suite, "--output", out, "--concurrency", "1", "--json", "--socket", d.socketPath]);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    const finished = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { kind: string; result?: { id: string } })
      .filter((l) => l.kind === "case")
      .map((l) => l.result?.id);
    expect(finished).toEqual(["b-long", "a-short"]);
    // the report keeps the suite's order whatever the start order was
    const report = EvalReport.parse(JSON.parse(fs.readFileSync(path.join(out, "eval-report.json"), "utf8")));
    expect(report.cases.map((c) => [c.id, c.verdict])).toEqual([
      ["a-short", "passed"],
      ["b-long", "passed"],
    ]);
    await started.stopDaemons("SIGTERM");
    const left = await docker.listContainers({ all: true, filters: { label: [labelFilter(INSTANCE_LABEL, instanceIdFor(stateDir))] } });
    expect(left).toEqual([]);
  }, 600_000);
});
