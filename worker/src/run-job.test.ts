import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadCase, packCase } from "../../eval/src/index.js";
import type { FleetJob } from "../../daemon/src/contracts/fleet.js";
import { bound, type JobDeps, JobRefused, runJob } from "./run-job.js";

/**
 * The job's checks before anything runs. The daemon is a fake that records
 * calls and refuses to create runs: a test passes only if no run was asked for.
 */
const CASE = path.resolve(import.meta.dirname, "../../evals/linkcheck-canonical");
let stateDir: string;
let created: number;
beforeEach(() => {
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "ma-runjob-"));
  created = 0;
});
afterEach(() => fs.rmSync(stateDir, { recursive: true, force: true }));

function deps(verdict = "passed"): JobDeps {
  const no = async () => {
    throw new Error("not in this test");
  };
  return {
    api: {
      createRun: async () => {
        created++;
        throw new Error("no daemon in this test");
      },
      events: no,
      getRun: no,
      cancel: no,
      diff: no,
      traceFile: no,
    },
    workDir: stateDir,
    runtime: "runc",
    identity: async () => ({ hostname: "h", worker_id: "w", engine_version: "20.10", runtime: "runc", image_digest: null, isolation_report_sha256: null }),
    familyVerdict: async () => ({ verdict, reason: verdict === "passed" ? null : "older than 24h" }),
    cancelled: async () => false,
    now: () => 0,
  };
}

async function job(over: Partial<FleetJob> = {}): Promise<FleetJob> {
  const p = await packCase(CASE);
  return {
    schema_version: 1,
    suite_run: "0123456789abcdef0123456789abcdef",
    case_id: "linkcheck-canonical",
    case_hash: (await loadCase(CASE)).hash,
    family: "node",
    model: "replay",
    profile: "eval",
    tar_base64: p.tar.toString("base64"),
    tar_sha256: p.sha256,
    ...over,
  };
}

async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    if (err instanceof JobRefused) return err.code;
    throw err;
  }
  return "accepted";
}

describe("a fleet job on the worker", () => {
  it("regression: a payload whose SHA-256 is not the job's is refused (never retried) and no run is created", async () => {
    const j = await job();
    expect(await refusal(runJob({ ...j, tar_sha256: "0".repeat(64) }, 1, deps()))).toBe("case_payload_mismatch");
    expect(created).toBe(0);
    expect(fs.readdirSync(stateDir)).toEqual([]);
  });

  it("refuses a case whose unpacked version is not the job's case_hash", async () => {
    expect(await refusal(runJob(await job({ case_hash: "f".repeat(64) }), 1, deps()))).toBe("case_payload_mismatch");
    expect(created).toBe(0);
  });

  it("refuses a payload that is not a fleet job, naming the field", async () => {
    const j = await job();
    expect(await refusal(runJob({ ...j, extra: 1 }, 1, deps()))).toBe("invalid_request");
    expect(await refusal(runJob({ ...j, model: "gpt" }, 1, deps()))).toBe("invalid_request");
  });

  it("regression: a forged case id of ../ steps is refused (never retried), and nothing is unpacked outside the work dir (it ran a case at an absolute path)", async () => {
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), "ma-runjob-outside-"));
    try {
      const target = path.join(outside, "planted");
      for (const case_id of [`${"../".repeat(12)}${target.slice(1)}`, "..", "a/../../b", target]) {
        expect(await refusal(runJob(await job({ case_id }), 1, deps())), case_id).toBe("invalid_request");
      }
      expect(created).toBe(0);
      expect(fs.readdirSync(outside)).toEqual([]);
      expect(fs.readdirSync(stateDir)).toEqual([]);
    } finally {
      fs.rmSync(outside, { recursive: true, force: true });
    }
  });

  it("a live-model case on a worker whose isolation report for the family is stale gets an error result saying why; no run is created", async () => {
    const r = await runJob(await job({ model: "live" }), 1, deps("stale"));
    expect(created).toBe(0);
    expect(r.result).toMatchObject({ verdict: "error", attempts: 1, run_id: null });
    expect(r.result.error).toContain("refused the live-model case: its isolation report for the node image is stale (older than 24h)");
    expect(r.worker.worker_id).toBe("w");
  });

  it("a replay case is taken whatever the isolation report says (it reaches the daemon)", async () => {
    const r = await runJob(await job(), 1, deps("stale"));
    expect(created).toBe(1);
    expect(r.result.verdict).toBe("error");
  });

  it("bounds a trace at whole lines below the cap", () => {
    expect(bound("a\nbb\nccc\n", 6)).toEqual({ text: "a\nbb\n", truncated: true });
    expect(bound("a\n", 6)).toEqual({ text: "a\n", truncated: false });
  });
});
