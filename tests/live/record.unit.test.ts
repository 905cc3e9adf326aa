import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Budgets } from "../../daemon/src/contracts/task-spec.js";
import { buildLiveRunRecord } from "../../daemon/src/live-record/record.js";
import { listLiveRunRecords, writeLiveRunRecord } from "../../daemon/src/live-record/write.js";
import { providerHost, resolveLiveModelConfig } from "../../daemon/src/models/live/config.js";
import type { RunView, TraceEvent } from "../../daemon/src/runtime/service.js";

const KEY = "sk-record-canary-0123456789abcdef";

function runView(status: RunView["status"], reason: string | null, passed: boolean | null): RunView {
  return {
    run_id: "run_live_1",
    status,
    reason,
    task: "fix nested links",
    workspace: "/home/someone/private/ws",
    model: "live",
    backend: "container",
    counters: { model_turns: 7, tool_calls: 5, writes: 2, elapsed_ms: 4200, prompt_tokens: 9000, completion_tokens: 800 },
    last_tool: "run_tests",
    tests: { discovered: 3, passed: 3, failed: 0 },
    pending_action: null,
    verification:
      passed === null
        ? null
        : {
            workspace_digest: "a".repeat(64),
            protected_paths_changed: [],
            tests: { discovered: 3, passed: 3, failed: 0, exit_code: 0, timed_out: false, truncated: false },
            acceptance: { passed: ["nested_link"], failed: [], error: null },
            passed,
            reason: passed ? null : "verification_failed",
          },
    exhausted_budget: null,
    last_seq: 20,
  };
}

let seq = 0;
const ev = (type: TraceEvent["type"], payload: Record<string, unknown> = {}): TraceEvent => ({ seq: ++seq, type, call_id: null, action_id: null, payload });
const EVENTS: TraceEvent[] = [
  ev("tool_proposed", { name: "read_file", arguments: { path: "src/linkcheck.js" } }),
  ev("tool_proposed", { name: "apply_patch", arguments: { path: "tests/test_agent_nested.js" } }),
  ev("approval_requested", { tool: "apply_patch", path: "tests/test_agent_nested.js", workspace_digest: "d".repeat(64), rule: "ask_edit" }),
  ev("approval_recorded", { decision: "approved" }),
  ev("model_retry", { attempt: 1, code: "model_error" }),
  ev("tool_proposed", { name: "run_tests", arguments: { preset: "unit" } }),
  ev("tool_proposed", { name: "apply_patch", arguments: { path: "src/linkcheck.js" } }),
  ev("approval_requested", { tool: "apply_patch", path: "src/linkcheck.js", workspace_digest: "d".repeat(64), rule: "ask_edit" }),
  ev("approval_recorded", { decision: "rejected", reason: "no" }),
  ev("tool_proposed", { name: "run_tests", arguments: { preset: "unit" } }),
];

describe("live run record", () => {
  let state: string;
  beforeEach(() => {
    state = fs.mkdtempSync(path.join(os.tmpdir(), "mini-agent-rec-"));
  });
  afterEach(() => fs.rmSync(state, { recursive: true, force: true }));

  function facts(run: RunView) {
    const config = resolveLiveModelConfig({ MINI_AGENT_BASE_URL: "https://llm.example.test:8443/v1", MINI_AGENT_MODEL: "some-model" });
    return {
      run,
      events: EVENTS,
      budgets: Budgets.parse({ tokens: 50_000 }),
      model: config.model,
      providerHost: providerHost(config),
      mode: config.mode,
      recordedAt: new Date("2026-11-30T01:00:00.000Z"),
      isolationReportGeneratedAt: "2026-11-30T00:30:00.000Z",
    };
  }

  it("counts tool calls by name, approvals asked/given, retries and usage from the trace, keeping only the provider host", async () => {
    const record = buildLiveRunRecord(facts(runView("completed", null, true)));
    expect(record.tool_calls_by_name).toEqual({ read_file: 1, apply_patch: 2, run_tests: 2 });
    expect(record.approvals).toEqual({ asked: 2, approved: 1, rejected: 1 });
    expect(record.model_retries).toBe(1);
    expect(record.usage).toEqual({ prompt_tokens: 9000, completion_tokens: 800 });
    expect(record.provider_host).toBe("llm.example.test:8443");
    expect(record.budgets.tokens).toBe(50_000);
    const file = await writeLiveRunRecord(state, record);
    const text = fs.readFileSync(file, "utf8");
    expect(path.dirname(file)).toBe(path.join(state, "live-runs"));
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    for (const leak of ["/home/someone", "/v1", "src/linkcheck.js", "fix nested links"]) expect(text).not.toContain(leak);
  });

  it("regression: a second record for the same run and second never overwrites the first; failed runs are kept; offline reports untouched", async () => {
    const offline = path.join(state, "reports", "offline-canonical.json");
    fs.mkdirSync(path.dirname(offline), { recursive: true });
    fs.writeFileSync(offline, '{"offline":true}\n');
    const a = await writeLiveRunRecord(state, buildLiveRunRecord(facts(runView("failed", "verification_failed", false))));
    const b = await writeLiveRunRecord(state, buildLiveRunRecord(facts(runView("completed", null, true))));
    expect(a).not.toBe(b);
    const all = await listLiveRunRecords(state);
    expect(all.map((r) => r.status)).toEqual(["failed", "completed"]);
    expect(fs.readFileSync(offline, "utf8")).toBe('{"offline":true}\n');
    expect(fs.readdirSync(path.join(state, "live-runs")).filter((n) => n.endsWith(".tmp"))).toEqual([]);
  });

  it("redacts a key that reached a reason string, and refuses a record with a field it does not know", async () => {
    const record = buildLiveRunRecord(facts(runView("failed", `model_error: provider answered HTTP 401: bad key ${KEY}`, null)));
    const file = await writeLiveRunRecord(state, record, [KEY]);
    const text = fs.readFileSync(file, "utf8");
    expect(text).not.toContain(KEY);
    expect(text).toContain("[redacted]");
    await expect(writeLiveRunRecord(state, { ...record, workspace: "/home/x" } as never)).rejects.toMatchObject({ code: "internal" });
  });
});
