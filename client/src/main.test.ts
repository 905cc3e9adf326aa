import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startTestApi, type TestApi } from "../../daemon/src/api/server.testkit.js";
import { MiniAgentError } from "../../daemon/src/errors.js";
import type { RunService, RunView, TraceEvent } from "../../daemon/src/runtime/service.js";
import { main, type ClientIO } from "./main.js";

/** ad-hoc drafting is not what these tests exercise (tests/e2e/adhoc*.test.ts is) */
/**
 * The client's flow against the real API server on a real socket. The run
 * service is a hand-built script (one pending write, then completed), because
 * what is under test is the client: prompts, printed commands, exit codes.
 */
function scriptedService() {
  const decided: string[] = [];
  let status: RunView["status"] = "awaiting_approval";
  const events: TraceEvent[] = [
    { seq: 1, type: "run_created", call_id: null, action_id: null, payload: {} },
    { seq: 2, type: "approval_requested", call_id: "c1", action_id: "act_1", payload: { tool: "apply_patch", path: "src/a.js" } },
  ];
  const view = (): RunView => ({
    run_id: "run_1",
    status,
    reason: status === "completed" ? "verified" : null,
    task: "t",
    workspace: "/w",
    model: "replay",
    backend: "container",
    counters: { model_turns: 2, tool_calls: 1, writes: status === "completed" ? 1 : 0, elapsed_ms: 1500, prompt_tokens: 0, completion_tokens: 0 },
    last_tool: "apply_patch",
    tests: status === "completed" ? { discovered: 3, passed: 3, failed: 0 } : null,
    pending_action:
      status === "awaiting_approval"
        ? {
            action_id: "act_1",
            call_id: "c1",
            tool: "apply_patch",
            path: "src/a.js",
            diff: "--- a/src/a.js\n+++ b/src/a.js\n@@ -1 +1 @@\n-old\n+new\n",
            why: "fix it",
          }
        : null,
    verification:
      status === "completed"
        ? {
            workspace_digest: "d",
            protected_paths_changed: [],
            tests: { discovered: 3, passed: 3, failed: 0, exit_code: 0, timed_out: false, truncated: false },
            acceptance: null,
            passed: true,
            reason: null,
          }
        : null,
    exhausted_budget: null,
    last_seq: events.length,
  });
  const finish = (what: string) => {
    decided.push(what);
    status = what.startsWith("approve") ? "completed" : "failed";
    events.push({ seq: events.length + 1, type: "run_stopped", call_id: null, action_id: null, payload: { status } });
  };
  const get = (id: string) => {
    if (id !== "run_1") throw new MiniAgentError("run_not_found", `no run ${id}`);
    return view();
  };
  const svc: RunService = {
    createRun: async () => view(),
    getRun: get,
    listRuns: () => [view()],
    async approve(id, a) {
      get(id);
      if (a !== "act_1" || status !== "awaiting_approval") throw new MiniAgentError("approval_unknown", `no pending action ${a}`);
      finish(`approve:${a}`);
      return view();
    },
    async reject(id, a, reason) {
      get(id);
      finish(`reject:${a}:${reason}`);
      return view();
    },
    resume: async (id) => get(id),
    cancel: async (id) => get(id),
    events: async (id, since) => (get(id), events.filter((e) => e.seq > since)),
    traceJsonl: () => "",
    traceFile: async () => "",
    diff: async () => "",
    recoverAtStartup: async () => {},
    shutdown: async () => {},
  };
  return { svc, decided };
}

let dir: string;
let socket: string;
let api: TestApi;
let script: ReturnType<typeof scriptedService>;

beforeEach(async () => {
  script = scriptedService();
  const isolation = {
    runProbes: async () => ({ passed: false, reason: "runtime_unavailable" }),
    latestReport: async () => null,
    health: async () => ({
      engine: { reachable: true, version: "20.10", runtime: "runc", image_digest: "sha256:x", image_present: true, error: null },
      isolation: { verdict: "stale" as const, generated_at: null, reason: "report_stale" },
    }),
  };
  api = await startTestApi({ runService: script.svc, isolation }, "ma-client-");
  ({ dir, socket } = api);
});

afterEach(async () => {
  await api.stop();
});

function io(opts: { tty: boolean; answers?: string[] }) {
  const out: string[] = [];
  const err: string[] = [];
  const asked: string[] = [];
  const answers = [...(opts.answers ?? [])];
  const value: ClientIO = {
    env: {},
    cwd: dir,
    isTTY: opts.tty,
    stdoutIsTTY: opts.tty,
    stderrIsTTY: opts.tty,
    clock: { now: () => 0, every: () => () => {} },
    out: (s) => out.push(s),
    err: (s) => err.push(s),
    ask: async (q) => {
      asked.push(q);
      return answers.shift() ?? "";
    },
  };
  return { value, out: () => out.join(""), err: () => err.join(""), asked };
}

describe("mini-agent-client flow", () => {
  it("without a TTY prints the diff and the exact approve/reject commands, then exits 3", async () => {
    const t = io({ tty: false });
    const code = await main(["events", "run_1", "--follow", "--socket", socket], t.value);
    expect(code).toBe(3);
    expect(t.out()).toContain("+new");
    expect(t.out()).toContain(`mini-agent-client approve --socket ${socket} run_1 act_1`);
    expect(t.out()).toContain(`mini-agent-client reject --socket ${socket} run_1 act_1 --reason`);
    expect(t.asked).toEqual([]);
    expect(script.decided).toEqual([]);
  });

  it("on a TTY asks y/N, approves through the API, follows to the end and exits 0", async () => {
    const t = io({ tty: true, answers: ["y"] });
    const code = await main(["run", "--fixture", "fx", "--workspace", "ws", "--socket", socket], t.value);
    expect(code).toBe(0);
    expect(t.asked[0]).toContain("src/a.js");
    expect(script.decided).toEqual(["approve:act_1"]);
    expect(t.out()).toContain("completed: verified by the host Verifier (tests 3/3 passed)");
    // the progress line is on stderr, redrawn in place and erased at the end; stdout stays clean
    expect(t.err()).toMatch(/turn 2 +last tool apply_patch/);
    expect(t.err().endsWith("\r\x1b[2K")).toBe(true);
    expect(t.out()).not.toContain("\r");
  });

  it("on a TTY, anything but y rejects with the reason typed, and the failed run exits 1", async () => {
    const t = io({ tty: true, answers: ["n", "touches the wrong file"] });
    const code = await main(["run", "--fixture", "fx", "--workspace", "ws", "--socket", socket], t.value);
    expect(code).toBe(1);
    expect(script.decided).toEqual(["reject:act_1:touches the wrong file"]);
  });

  it("status --json carries run_id, status, reason and the pending action_id", async () => {
    const t = io({ tty: false });
    expect(await main(["status", "run_1", "--json", "--socket", socket], t.value)).toBe(3);
    expect(JSON.parse(t.out())).toMatchObject({ run_id: "run_1", status: "awaiting_approval", reason: null, action_id: "act_1" });
  });

  it("approve follows to the next stop and exits with the run's code; an unknown action is a clear error", async () => {
    const bad = io({ tty: false });
    expect(await main(["approve", "run_1", "act_9", "--socket", socket], bad.value)).toBe(1);
    expect(bad.err()).toContain("approval_unknown");
    const t = io({ tty: false });
    expect(await main(["approve", "run_1", "act_1", "--socket", socket], t.value)).toBe(0);
    expect(t.out()).toContain("#3 run_stopped status=completed");
  });

  it("run --sandbox-include (repeatable) sends the opt-in globs with the create-run request", async () => {
    const sent: unknown[] = [];
    const create = script.svc.createRun;
    script.svc.createRun = async (input) => (sent.push(input.sandboxInclude), create(input));
    const t = io({ tty: false });
    const code = await main(
      ["run", "--fixture", "fx", "--workspace", "ws", "--sandbox-include", ".env.test", "--sandbox-include", "config/dev.key", "--socket", socket],
      t.value,
    );
    expect(code).toBe(3);
    expect(sent).toEqual([[".env.test", "config/dev.key"]]);
  });

  it.each([["/etc/shadow"], ["../outside/.env"], ["./.env.test"], ["a\\b"], ["*"], ["config/*.key"]])(
    "run --sandbox-include %j is a usage error (64) and nothing is sent",
    async (glob) => {
      const sent: unknown[] = [];
      script.svc.createRun = async (input) => {
        sent.push(input);
        throw new Error("must not be called");
      };
      const t = io({ tty: false });
      expect(await main(["run", "--fixture", "fx", "--workspace", "ws", "--sandbox-include", glob, "--socket", socket], t.value)).toBe(64);
      expect(t.err()).toContain("--sandbox-include");
      expect(sent).toEqual([]);
    },
  );

  it("regression: run --sandbox-include '*' lifted every forbidden file at every depth; a wildcard is a usage error (64) naming the pattern and what to write", async () => {
    script.svc.createRun = async () => {
      throw new Error("must not be called");
    };
    const t = io({ tty: false });
    expect(await main(["run", "--fixture", "fx", "--workspace", "ws", "--sandbox-include", ".env*", "--socket", socket], t.value)).toBe(64);
    expect(t.err()).toContain('--sandbox-include ".env*" is refused: a wildcard would let every forbidden file it matches');
    expect(t.err()).toContain("e.g. --sandbox-include .env.test");
  });

  it("regression: run had no per-run runtime; run --runtime runsc sends it with the create-run request", async () => {
    const sent: unknown[] = [];
    const create = script.svc.createRun;
    script.svc.createRun = async (input) => (sent.push(input.runtime), create(input));
    const t = io({ tty: false });
    expect(await main(["run", "--fixture", "fx", "--workspace", "ws", "--runtime", "runsc", "--socket", socket], t.value)).toBe(3);
    expect(sent).toEqual(["runsc"]);
    expect(t.out()).toContain("backend container, runtime runsc");
  });

  it("run --fixture DIR without --workspace copies the fixture into a new folder under the temp dir and names it", async () => {
    const sent: string[] = [];
    const create = script.svc.createRun;
    script.svc.createRun = async (input) => (sent.push(input.workspace), create(input));
    const t = io({ tty: false });
    expect(await main(["run", "--fixture", "fx", "--socket", socket], t.value)).toBe(3);
    expect(sent).toHaveLength(1);
    expect(path.dirname(sent[0]!)).toBe(os.tmpdir());
    expect(path.basename(sent[0]!)).toMatch(/^mini-agent-fx-[0-9a-f]{8}$/);
    expect(t.out()).toContain(`workspace ${sent[0]}`);
  });

  it.each([
    [["--runtime", "kata"], "--runtime: use runc or runsc"],
    [["--runtime", "runsc", "--backend", "trusted_local"], "trusted_local runs host processes and has none"],
  ])("run %j is a usage error (64) and nothing is sent", async (extra, message) => {
    const sent: unknown[] = [];
    script.svc.createRun = async (input) => {
      sent.push(input);
      throw new Error("must not be called");
    };
    const t = io({ tty: false });
    expect(await main(["run", "--fixture", "fx", "--workspace", "ws", ...extra, "--socket", socket], t.value)).toBe(64);
    expect(t.err()).toContain(message);
    expect(sent).toEqual([]);
  });

  it.each([
    [["stauts", "r1"], "mini-agent-client: unknown command 'stauts' (did you mean 'status'?)\nrun `node /r/cli.js --help` for more\n"],
    [["run", "--workspce", "/w"], "mini-agent-client: run: unknown option --workspce (did you mean --workspace?)\nrun `node /r/cli.js run --help` for more\n"],
    [["status"], "mini-agent-client: status takes RUN\nrun `node /r/cli.js status --help` for more\n"],
    [["run", "--fixture", "fx", "--model", "lve"], "mini-agent-client: run: --model: use replay or live\nrun `node /r/cli.js run --help` for more\n"],
  ])(
    "regression: %j is one line naming the mistake and the near word, then where the help is (it printed Node's message and the whole help), exit 64",
    async (argv, text) => {
      const t = io({ tty: false });
      expect(await main([...argv, "--socket", socket], { ...t.value, program: "node /r/cli.js" })).toBe(64);
      expect(t.err()).toBe(text);
      expect(t.out()).toBe("");
    },
  );

  it.each([
    [["run", "--fixture", "fx", "--replay", "/no/such/replay.json"], "--replay: no file at /no/such/replay.json"],
    [["run", "--workspace", "/tmp", "--task-spec", "/no/such/task.json", "--control", "/no/such/control"], "--control: no folder at /no/such/control"],
  ])("regression: %j named neither the flag nor the path and exited 1; now a usage error (64) naming both, nothing sent", async (argv, text) => {
    const sent: unknown[] = [];
    script.svc.createRun = async (input) => {
      sent.push(input);
      throw new Error("must not be called");
    };
    const t = io({ tty: false });
    expect(await main([...argv, "--socket", socket], t.value)).toBe(64);
    expect(t.err()).toContain(text);
    expect(sent).toEqual([]);
  });

  it("regression: a printed approve command starts with the program as the user can run it (`mini-agent-client` was not on the PATH)", async () => {
    const t = io({ tty: false });
    expect(
      await main(["run", "--fixture", "fx", "--workspace", path.join(dir, "ws-program"), "--socket", socket], { ...t.value, program: "node /r/cli.js" }),
    ).toBe(3);
    expect(t.out()).toMatch(new RegExp(`\\n  node /r/cli\\.js approve --socket ${socket.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")} \\S+ \\S+\\n`));
  });

  it("health exits 2 while isolation is not verified, and says how to refresh it", async () => {
    const t = io({ tty: false });
    expect(await main(["health", "--socket", socket], t.value)).toBe(2);
    expect(t.out()).toContain("mini-agent-client probe");
  });
});
