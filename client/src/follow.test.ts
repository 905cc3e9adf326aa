import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startTestApi, type TestApi } from "../../daemon/src/api/server.testkit.js";
import type { RunView, TraceEvent, VerificationEvidence } from "../../daemon/src/contracts/run-view.js";
import { MiniAgentError } from "../../daemon/src/errors.js";
import type { RunService } from "../../daemon/src/runtime/service.js";
import { main, type ClientIO } from "./main.js";

/** ad-hoc drafting is not what these tests exercise (tests/e2e/adhoc*.test.ts is) */
/**
 * The client against the real API server on a real socket, with a run service
 * the test moves by hand: the events long-poll waits until the test releases
 * the next batch, so what the client shows while it waits can be observed.
 */
const EVIDENCE: VerificationEvidence = {
  workspace_digest: "d".repeat(64),
  protected_paths_changed: [],
  tests: { discovered: 3, passed: 3, failed: 0, exit_code: 0, timed_out: false, truncated: false },
  acceptance: { passed: ["root_ok", "root_missing", "nested_ok", "nested_anchor"], failed: ["edges_trimmed"], error: null },
  passed: false,
  reason: "verification_failed",
  details: ["hidden acceptance case(s) failed: edges_trimmed"],
  changed_path_count: 1,
  false_green: null,
};

function steppedService() {
  let view: RunView = {
    run_id: "run_1",
    status: "running",
    reason: null,
    task: "t",
    workspace: "/w",
    model: "replay",
    backend: "container",
    counters: { model_turns: 1, tool_calls: 1, writes: 1, elapsed_ms: 100, prompt_tokens: 0, completion_tokens: 0 },
    last_tool: "apply_patch",
    tests: null,
    pending_action: null,
    verification: null,
    exhausted_budget: null,
    last_seq: 0,
  };
  const events: TraceEvent[] = [];
  let release: (() => void) | null = null;
  let polled: (() => void) | null = null;
  const get = (id: string) => {
    if (id !== "run_1") throw new MiniAgentError("run_not_found", `no run ${id}`);
    return view;
  };
  const svc: RunService = {
    createRun: async () => view,
    getRun: get,
    listRuns: () => [view],
    approve: async (id) => get(id),
    reject: async (id) => get(id),
    resume: async (id) => get(id),
    cancel: async (id) => get(id),
    async events(id, since) {
      get(id);
      const fresh = events.filter((e) => e.seq > since);
      if (fresh.length > 0) return fresh;
      polled?.();
      await new Promise<void>((r) => (release = r));
      return events.filter((e) => e.seq > since);
    },
    traceJsonl: () => "",
    traceFile: async () => "",
    diff: async () => "",
    recoverAtStartup: async () => {},
    shutdown: async () => {},
  };
  return {
    svc,
    /** appends events, changes the view, and answers the waiting long-poll */
    push(types: Array<[TraceEvent["type"], Record<string, unknown>, string | null]>, change: Partial<RunView> = {}) {
      for (const [type, payload, call_id] of types) events.push({ seq: events.length + 1, type, call_id, action_id: null, payload });
      view = { ...view, ...change, last_seq: events.length };
      release?.();
      release = null;
    },
    /** resolves when the client is waiting in a long-poll with nothing new */
    waiting: () => new Promise<void>((r) => (polled = r)),
  };
}

let dir: string;
let socket: string;
let api: TestApi;
let svc: ReturnType<typeof steppedService>;

beforeEach(async () => {
  svc = steppedService();
  api = await startTestApi({ runService: svc.svc, maxWaitMs: 60_000 }, "ma-follow-");
  ({ dir, socket } = api);
});

afterEach(async () => {
  await api.stop();
});

/** A terminal on every stream, with a clock the test moves and a timer it fires. */
function terminal(opts: { stderrIsTTY: boolean }) {
  const out: string[] = [];
  const err: string[] = [];
  let now = 0;
  let tick: (() => void) | null = null;
  const io: ClientIO = {
    env: {},
    cwd: dir,
    isTTY: true,
    stdoutIsTTY: true,
    stderrIsTTY: opts.stderrIsTTY,
    clock: {
      now: () => now,
      every(_ms, fn) {
        tick = fn;
        return () => (tick = null);
      },
    },
    out: (s) => out.push(s),
    err: (s) => err.push(s),
    ask: async () => "",
  };
  return {
    io,
    out: () => out.join(""),
    err: () => err.join(""),
    advance(ms: number) {
      now += ms;
      tick?.();
    },
    ticking: () => tick !== null,
  };
}

describe("following a run on a terminal", () => {
  it("shows 'running tests in the sandbox… 1.4 s' then 'verifying…' on stderr while waiting, erases it, then prints why the run failed", async () => {
    const t = terminal({ stderrIsTTY: true });
    let waiting = svc.waiting();
    // `resume` follows the run to its next stop, as `run` and `approve` do
    const code = main(["resume", "run_1", "--socket", socket], t.io);
    await waiting;
    waiting = svc.waiting();
    svc.push([["tool_proposed", { name: "run_tests" }, "c1"]]);
    await waiting;
    t.advance(1400);
    expect(t.err()).toContain("\r\x1b[2Krunning tests in the sandbox… 1.4 s");
    waiting = svc.waiting();
    svc.push(
      [
        ["tool_observed", { tool: "run_tests" }, "c1"],
        ["verification_started", {}, null],
      ],
      { status: "verifying" },
    );
    await waiting;
    t.advance(3200);
    expect(t.err()).toContain("\r\x1b[2Kverifying… 3.2 s");
    svc.push(
      [
        ["verification_failed", { reason: "verification_failed" }, null],
        ["run_stopped", { status: "failed" }, null],
      ],
      {
        status: "failed",
        reason: "verification_failed",
        verification: EVIDENCE,
      },
    );
    expect(await code).toBe(1);
    expect(t.err().endsWith("\r\x1b[2K")).toBe(true);
    expect(t.ticking()).toBe(false);
    expect(t.out()).toContain("failed: hidden acceptance 4/5 passed (edges_trimmed failed); candidate tests 3/3 passed\n");
    // the indicator never went to stdout
    expect(t.out()).not.toContain("\r");
  });

  it("with stderr not a terminal, nothing is drawn at all", async () => {
    const t = terminal({ stderrIsTTY: false });
    const waiting = svc.waiting();
    const code = main(["resume", "run_1", "--socket", socket], t.io);
    await waiting;
    svc.push([["verification_started", {}, null]], { status: "verifying" });
    t.advance(1000);
    svc.push([["run_stopped", { status: "failed" }, null]], { status: "failed", reason: "verification_failed", verification: EVIDENCE });
    expect(await code).toBe(1);
    expect(t.err()).toBe("");
  });

  it("status --json: a view with every field (details, counts, budget) survives the client's parse", async () => {
    svc.push([["run_stopped", { status: "failed" }, null]], { status: "failed", reason: "verification_failed", verification: EVIDENCE });
    const t = terminal({ stderrIsTTY: false });
    expect(await main(["status", "run_1", "--json", "--socket", socket], t.io)).toBe(1);
    const json = JSON.parse(t.out()) as Record<string, unknown>;
    expect(json).toEqual({
      ...svc.svc.getRun("run_1"),
      action_id: null,
      why: "failed: hidden acceptance 4/5 passed (edges_trimmed failed); candidate tests 3/3 passed",
    });
  });
});
