import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RunView } from "../../daemon/src/contracts/run-view.js";
import { MiniAgentError } from "../../daemon/src/errors.js";
import type { LoadedCase } from "./case-load.js";
import { CaseInterrupted, type CaseRunContext, runCase } from "./run-case.js";
import { openOutput } from "./run-state.js";
import { CaseResult } from "../../daemon/src/contracts/eval-report.js";

/**
 * runCase against a hand-built daemon API: the faults here (a run that waits
 * for a person forever, a daemon gone mid-case) are the ones a unit test can
 * pin without timing; tests/e2e/eval-run.test.ts shows them with a real daemon.
 */
let out: string;
beforeEach(() => {
  out = fs.mkdtempSync(path.join(os.tmpdir(), "eval-case-"));
  openOutput(out, { schema_version: 1, model: "replay", runtime: "runc", policy_profile: "eval" }, false);
});
afterEach(() => fs.rmSync(out, { recursive: true, force: true }));

const theCase: LoadedCase = {
  id: "c1",
  dir: "/cases/c1",
  hash: "a".repeat(64),
  expect: { schema_version: 1, status: "completed" },
  // runCase sends the case folder to the daemon; it never reads these
  task: {} as LoadedCase["task"],
  replay: {} as LoadedCase["replay"],
  hasControl: false,
};

function view(status: RunView["status"]): RunView {
  return {
    run_id: "r1",
    status,
    reason: null,
    task: "t",
    workspace: "/w",
    model: "replay",
    backend: "container",
    counters: { model_turns: 1, tool_calls: 2, writes: 0, elapsed_ms: 10, prompt_tokens: 0, completion_tokens: 0 },
    last_tool: null,
    tests: null,
    pending_action: null,
    verification: null,
    exhausted_budget: null,
    last_seq: 3,
  };
}

function fakeApi(opts: { afterCreate: RunView["status"]; unreachableOnEvents?: boolean; swebench?: RunView["swebench"] }) {
  const calls: string[] = [];
  const bodies: Array<Record<string, unknown>> = [];
  const api: CaseRunContext["api"] = {
    async createRun(body) {
      calls.push(`create ${String(body.workspace)}`);
      bodies.push(body as Record<string, unknown>);
      fs.mkdirSync(String(body.workspace), { recursive: true });
      return { kind: "run", run: view("running") };
    },
    async events() {
      calls.push("events");
      // a long poll takes time: without this, a runner that never cancels would spin instead of timing out
      await new Promise((r) => setTimeout(r, 1));
      if (opts.unreachableOnEvents) throw new MiniAgentError("daemon_unreachable", "gone");
      return { kind: "events", events: [], run: { ...view(opts.afterCreate), ...(opts.swebench && { swebench: opts.swebench }) } };
    },
    async getRun() {
      return { kind: "run", run: view(opts.afterCreate) };
    },
    async cancel() {
      calls.push("cancel");
      return { kind: "run", run: view("cancelled") };
    },
    async diff() {
      return { kind: "diff", run_id: "r1", diff: "" };
    },
    async traceFile() {
      return "";
    },
  };
  return { api, calls, bodies };
}

describe("runCase", () => {
  it("regression: a run that stops for a person's answer is cancelled at once and is needs_human, never left waiting", async () => {
    const { api, calls } = fakeApi({ afterCreate: "awaiting_approval" });
    const r = await runCase(theCase, 1, { api, output: out, model: "replay", profile: "eval", daemonRuntime: "runc", now: () => 0 });
    expect(r).toMatchObject({ verdict: "needs_human", status: "cancelled", attempts: 1 });
    expect(calls.filter((c) => c === "cancel")).toHaveLength(1);
    expect(fs.existsSync(path.join(out, "workspaces", "c1.1"))).toBe(false);
  }, 5_000);

  it("regression: --runtime was only checked against the daemon's; now every case's createRun asks for it and the result names it", async () => {
    const { api, bodies } = fakeApi({ afterCreate: "completed" });
    const asked = await runCase(theCase, 1, { api, output: out, model: "replay", profile: "eval", runtime: "runsc", daemonRuntime: "runc", now: () => 0 });
    expect(bodies.at(-1)).toMatchObject({ backend: "container", runtime: "runsc" });
    // the fake daemon's view names no runtime (as an older daemon): the daemon's own is what the case ran under
    expect(asked.runtime).toBe("runc");
    const plain = await runCase(theCase, 2, { api, output: out, model: "replay", profile: "eval", daemonRuntime: "runc", now: () => 0 });
    expect(bodies.at(-1)).not.toHaveProperty("runtime");
    expect(plain.runtime).toBe("runc");
  });

  it("a daemon gone mid-case interrupts the case: no result, the started record keeps the run id to cancel on resume", async () => {
    const { api } = fakeApi({ afterCreate: "running", unreachableOnEvents: true });
    await expect(runCase(theCase, 2, { api, output: out, model: "replay", profile: "eval", daemonRuntime: "runc", now: () => 0 })).rejects.toBeInstanceOf(
      CaseInterrupted,
    );
    expect(JSON.parse(fs.readFileSync(path.join(out, "started", "c1.json"), "utf8"))).toEqual({ attempts: 2, run_id: "r1", hash: "a".repeat(64) });
    expect(fs.existsSync(path.join(out, "cases", "c1.json"))).toBe(false);
    expect(fs.existsSync(path.join(out, "workspaces", "c1.2"))).toBe(false);
  });

  it("the case result carries the run's SWE-bench-shaped report as the daemon gave it, and it survives the report's strict schema", async () => {
    const split = (success: string[], failure: string[]) => ({ success, failure });
    const swebench = {
      patch_exists: true,
      patch_successfully_applied: true,
      resolved: true,
      tests_status: { FAIL_TO_PASS: split(["t::a"], []), PASS_TO_PASS: split(["t::b"], []), FAIL_TO_FAIL: split([], []), PASS_TO_FAIL: split([], []) },
    };
    const { api } = fakeApi({ afterCreate: "completed", swebench });
    const r = await runCase(theCase, 1, { api, output: out, model: "replay", profile: "eval", daemonRuntime: "runc", now: () => 0 });
    expect(r.swebench).toEqual(swebench);
    expect(CaseResult.parse(JSON.parse(JSON.stringify(r))).swebench).toEqual(swebench);
  });
});
