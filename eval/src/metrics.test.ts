import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EvalIO } from "./command.js";
import type { Metrics } from "./metrics.js";
import { metricsCommand } from "./metrics-command.js";

/** One trace line as the daemon writes it (contracts/trace-file.ts). */
function ev(seq: number, at: number, type: string, payload: Record<string, unknown>, ids: { call?: string; action?: string } = {}): string {
  return `${JSON.stringify({ seq, at, type, call_id: ids.call ?? null, action_id: ids.action ?? null, payload })}\n`;
}

const RUN_CREATED = { task: "t", model: "replay", backend: "container" };

// run-a: a person approves a write after 4 s, an observation is truncated, a stale write, completes
const RUN_A =
  ev(1, 1000, "run_created", { task: "linkcheck", model: "replay", backend: "container" }) +
  ev(2, 1100, "tool_observed", { tool: "read_file", ok: true, error: null, truncated: true }, { call: "c1" }) +
  ev(3, 1200, "tool_observed", { tool: "apply_patch", ok: false, error: "stale_version", truncated: false }, { call: "c2" }) +
  ev(4, 1300, "approval_requested", { tool: "apply_patch", path: "src/x.js", rule: "ask", workspace_digest: "sha256:w" }, { call: "c3", action: "a1" }) +
  ev(5, 5300, "approval_recorded", { decision: "approved", by: "user" }, { call: "c3", action: "a1" }) +
  ev(6, 5400, "action_receipt", { path: "src/x.js", after_hash: "h", source: "written" }, { action: "a1" }) +
  ev(7, 5500, "tool_observed", { tool: "run_tests", ok: true, error: null, truncated: false, discovered: 3, passed: 3, failed: 0 }, { call: "c4" }) +
  ev(8, 6000, "verification_passed", { reason: null }) +
  ev(9, 6100, "run_stopped", { status: "completed", reason: "verified by the host" });

// run-b: the eval policy approves (no request, no wait), the Verifier rejects twice over two attempts, stale_version again
const RUN_B =
  ev(1, 0, "run_created", RUN_CREATED) +
  ev(2, 10, "tool_observed", { tool: "apply_patch", ok: false, error: "stale_version", truncated: false }, { call: "c1" }) +
  ev(3, 20, "approval_recorded", { decision: "approved", by: "policy:eval:auto_edit:src/**" }, { call: "c2", action: "b1" }) +
  ev(4, 30, "verification_failed", { reason: "verification_failed" }) +
  ev(5, 40, "run_resumed", { from: "interrupted", phase: "running", budgets: {} }) +
  ev(6, 50, "action_receipt", { path: "src/y.js", after_hash: "h", source: "recovered" }, { action: "b1" }) +
  ev(7, 60, "verification_failed", { reason: "verification_error:runtime_unavailable" }) +
  ev(8, 70, "run_stopped", { status: "failed", reason: "verification_error:runtime_unavailable" });

// run-c: resumed, recovery finds a file changed by someone else: uncertain; an approval asked and never answered before; torn last line
const RUN_C_TORN =
  ev(1, 0, "run_created", RUN_CREATED) +
  ev(2, 100, "approval_requested", { tool: "apply_patch", path: "a.txt", rule: "ask", workspace_digest: "sha256:w" }, { action: "c9" }) +
  ev(3, 200, "approval_requested", { tool: "apply_patch", path: "b.txt", rule: "ask", workspace_digest: "sha256:w" }, { action: "c1" }) +
  ev(4, 1200, "approval_recorded", { decision: "stale", reason: "workspace changed", by: "user" }, { action: "c1" }) +
  ev(5, 1300, "run_resumed", { from: "interrupted", phase: "running", budgets: {} }) +
  ev(6, 1400, "run_stopped", { status: "uncertain", path: "b.txt" }) +
  ev(7, 1500, "tool_observed", { tool: "read_file", ok: false, error: "not_found", truncated: false }).slice(0, 40);

// run-d: the model answers garbage; a model_error stop with free text that must count under one code
const RUN_D =
  ev(1, 0, "tool_observed", { tool: "nope", ok: false, error: "unknown_tool", truncated: false }) +
  ev(2, 1, "tool_observed", { tool: "read_file", ok: false, error: "invalid_fields", truncated: false }) +
  ev(3, 2, "run_stopped", { status: "failed", reason: "model_error: provider said 500 at 12:00" }) +
  // a payload this version cannot read (a reason a newer daemon named): left out and named, never guessed at
  ev(4, 3, "verification_failed", { reason: "a_reason_from_a_newer_daemon" });

describe("mini-agent-client eval metrics", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "eval-metrics-"));
    const traces = path.join(dir, "out", "traces");
    await mkdir(traces, { recursive: true });
    await writeFile(path.join(dir, "out", "eval-report.json"), "{}");
    await writeFile(path.join(traces, "run-a.jsonl"), RUN_A);
    await writeFile(path.join(traces, "run-b.jsonl"), RUN_B);
    await writeFile(path.join(traces, "run-c.jsonl"), RUN_C_TORN);
    await writeFile(path.join(traces, "run-d.jsonl"), RUN_D);
    // not trace files: prose, a damaged line in the middle, an empty file, a folder named like one, another extension
    await writeFile(path.join(traces, "notes.jsonl"), "these are my notes\nabout the runs\n");
    await writeFile(path.join(traces, "damaged.jsonl"), `${ev(1, 0, "run_created", RUN_CREATED)}{"seq":2}\n${ev(3, 0, "run_created", RUN_CREATED)}`);
    await writeFile(path.join(traces, "empty.jsonl"), "");
    await mkdir(path.join(traces, "dir.jsonl"));
    await writeFile(path.join(traces, "readme.txt"), "not read");
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function run(argv: string[]) {
    let out = "";
    let err = "";
    const io = {
      env: {},
      cwd: dir,
      stderrIsTTY: false,
      stdoutIsTTY: false,
      clock: { now: () => 0 },
      out: (s: string) => void (out += s),
      err: (s: string) => void (err += s),
    };
    const code = await metricsCommand.main(argv, io as unknown as EvalIO);
    return { code, out, err };
  }

  it("counts what the traces say; a torn last line is reported by file and line and never counted; files that are not traces are skipped", async () => {
    const { code, out } = await run(["out", "--json"]);
    expect(code).toBe(0);
    const m = JSON.parse(out) as Metrics & { folder: string };
    expect(m.folder).toBe(path.join(dir, "out", "traces"));
    // damaged.jsonl: a cut line in the middle (the daemon went on after a crash) is torn, its other events count
    expect(m.runs_read).toBe(5);
    expect(m.torn).toEqual([
      { file: "damaged.jsonl", line: 2, bytes: 9, why: "invalid" },
      { file: "run-c.jsonl", line: 7, bytes: 40, why: "no_newline" },
    ]);
    expect(m.skipped.map((s) => s.file).sort()).toEqual(["dir.jsonl", "notes.jsonl"]);
    expect(m.skipped.find((s) => s.file === "notes.jsonl")?.why).toContain("no valid event");

    // most frequent first; the torn not_found is not among them; model_error's free text is cut off
    expect(m.error_codes[0]).toEqual({ key: "tool:stale_version", count: 2, runs: 2 });
    expect(m.error_codes).toContainEqual({ key: "stop:model_error", count: 1, runs: 1 });
    expect(m.error_codes).toContainEqual({ key: "stop:uncertain", count: 1, runs: 1 });
    expect(m.error_codes).toContainEqual({ key: "tool:unknown_tool", count: 1, runs: 1 });
    expect(m.error_codes.map((c) => c.key)).not.toContain("tool:not_found");
    expect(m.error_codes.map((c) => c.key)).not.toContain("stop:verified by the host");

    expect(m.approvals).toEqual({
      requested: 3,
      by_person: 1,
      by_policy: 1,
      refused: 1,
      unanswered: 1,
      wait_ms: { count: 2, p50: 1000, p95: 4000, max: 4000 },
    });
    expect(m.truncation).toEqual({ observations: 6, truncated: 1, rate: 1 / 6 });
    expect(m.verifier).toEqual({
      rejections: 2,
      reasons: [
        { key: "verification_error:runtime_unavailable", count: 1, runs: 1 },
        { key: "verification_failed", count: 1, runs: 1 },
      ],
    });
    expect(m.unreadable).toEqual([{ file: "run-d.jsonl", seq: 4, type: "verification_failed" }]);
    expect(m.uncertain).toEqual({ ended_uncertain: [{ run: "run-c", path: "b.txt" }], resumed_runs: 2, resumes: 2, recovered_writes: 1 });
  });

  it("prints a plain table naming the torn and skipped files and the events it could not read", async () => {
    const { code, out } = await run(["out"]);
    expect(code).toBe(0);
    expect(out).toContain("5 run(s) read, 2 torn, 2 skipped");
    expect(out).toContain("torn: run-c.jsonl line 7 (40 bytes, no newline; left out)");
    expect(out).toContain("unreadable: run-d.jsonl event 4 (verification_failed: a type or payload this version does not know; left out)");
    expect(out).toMatch(/tool:stale_version\s+2\s+2/);
    expect(out).toContain("approval wait (asked -> answered): p50 1.0 s, p95 4.0 s, max 4.0 s over 2");
    expect(out).toContain("output truncation: 1 of 6 observations (16.7 %)");
    expect(out).toContain("uncertain: run-c (b.txt)");
  });

  it("reads any folder of *.jsonl (a state dir's traces/) and refuses a missing folder or extra arguments as usage errors", async () => {
    const direct = await run([path.join(dir, "out", "traces"), "--json"]);
    expect(JSON.parse(direct.out).runs_read).toBe(5);
    expect((await run(["nowhere"])).code).toBe(64);
    expect((await run([])).code).toBe(64);
    expect((await run(["out", "--bogus"])).code).toBe(64);
  });
});
