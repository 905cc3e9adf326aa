import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { SandboxResult, SandboxRunRequest } from "../contracts/sandbox.js";
import { isMiniAgentError } from "../errors.js";
import type { Executor, SandboxSession } from "../sandbox/executor.js";
import { LocalExecutor } from "../sandbox/local-executor.js";
import { sandboxResult } from "../sandbox/result.testkit.js";
import { createRunService, type RunServiceImpl } from "./service-impl.js";

/**
 * run_command through the real run service, ledger, policy and approvals; only
 * the sandbox is a hand-built fake, so each case can count the sandboxes that
 * were opened and the commands that reached one (the real-Docker proof is
 * tests/e2e/run-command.test.ts).
 */
const LINKCHECK = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../fixtures/linkcheck");
const root = fs.mkdtempSync(path.join(os.tmpdir(), "mini-agent-cmd-step-"));
const services: RunServiceImpl[] = [];
let n = 0;

afterEach(async () => {
  for (const s of services.splice(0)) await s.shutdown().catch(() => undefined);
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

/** A sandbox that records what reached it. `hold` makes exec wait until its signal aborts (a daemon stopping mid-command). */
class FakeSandbox implements Executor {
  sessions = 0;
  execs: Array<Omit<SandboxRunRequest, "runId">> = [];
  hold = false;
  constructor(
    readonly kind: "container" | "trusted_local",
    private readonly answer: (req: Omit<SandboxRunRequest, "runId">) => SandboxResult = () => sandboxResult(),
  ) {}
  async run(): Promise<SandboxResult> {
    throw new Error("no fresh sandbox in these cases");
  }
  async openSession(): Promise<SandboxSession> {
    this.sessions++;
    return {
      exec: async (req) => {
        this.execs.push(req);
        if (this.hold) {
          await new Promise<void>((resolve) => req.signal?.addEventListener("abort", () => resolve(), { once: true }));
          return sandboxResult({ cancelled: true, exit_code: null });
        }
        return this.answer(req);
      },
      close: async () => {},
    };
  }
  async describe() {
    return { runtime: "runc" as const, imageDigest: null, engineVersion: null };
  }
  async preflight(): Promise<void> {}
}

const call = (id: string, argv: string[]) => ({ kind: "tool", call: { call_id: id, name: "run_command", arguments: { argv } } });
/** a write: the run stops there (awaiting approval), after the calls before it were answered */
const PARK = {
  kind: "tool",
  call: { call_id: "park", name: "apply_patch", arguments: { path: "tests/test_agent_park.js", version: "absent", old: "", new: "x" } },
};

async function start(executor: FakeSandbox, decisions: unknown[], stateDir = path.join(root, `state-${++n}`)) {
  const replay = path.join(root, `replay-${n}.json`);
  fs.writeFileSync(replay, JSON.stringify({ schema_version: 1, decisions }));
  const runs = createRunService({ stateDir, executorFactory: () => executor });
  services.push(runs);
  const created = await runs.createRun({
    workspace: path.join(root, `ws-${n}`),
    fixtureDir: LINKCHECK,
    model: "replay",
    replayPath: replay,
    trustReplayFile: true,
    backend: executor.kind,
  });
  return { runs, runId: created.run_id, stateDir, ws: path.join(root, `ws-${n}`) };
}

function observed(runs: RunServiceImpl, runId: string, callId: string) {
  const msg = runs.ledger.listMessages(runId).find((m) => m.role === "tool" && m.result.call_id === callId);
  return msg?.role === "tool" ? msg.result : undefined;
}

function events(runs: RunServiceImpl, runId: string, type: string, callId: string) {
  return runs.ledger.listEvents(runId, 0).filter((e) => e.type === type && e.call_id === callId);
}

describe("run_command: the policy decides before anything runs", () => {
  it("a denied command is refused as policy_denied naming the rule, and no sandbox is ever opened for it", async () => {
    const sandbox = new FakeSandbox("container");
    const { runs, runId } = await start(sandbox, [call("c1", ["curl", "https://example.com"]), call("c2", ["/usr/bin/curl", "x"]), PARK]);
    expect((await runs.settled(runId)).status).toBe("awaiting_approval");
    expect(sandbox.sessions).toBe(0);
    expect(sandbox.execs).toEqual([]);
    for (const id of ["c1", "c2"]) {
      expect(observed(runs, runId, id)?.error?.code).toBe("policy_denied");
      expect(events(runs, runId, "tool_observed", id)[0]?.payload).toMatchObject({
        tool: "run_command",
        decision: "deny",
        rule: "policy:interactive:deny_token:curl",
      });
    }
    expect(observed(runs, runId, "c1")?.error?.message).toContain("policy:interactive:deny_token:curl");
    // a deny leaves no action behind, so there is nothing an explicit approve could name
    expect(runs.ledger.listActions(runId).map((a) => a.record.tool)).toEqual(["apply_patch"]);
  });

  it("the argv in the trace goes through the daemon's one redaction rule set: a credential in a command never reaches the trace", async () => {
    const secret = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789";
    const sandbox = new FakeSandbox("container");
    const { runs, runId } = await start(sandbox, [call("c1", ["curl", "-H", `Authorization: Bearer ${secret}`, "https://example.com"]), PARK]);
    await runs.settled(runId);
    const payload = JSON.stringify(events(runs, runId, "tool_observed", "c1")[0]?.payload);
    expect(payload).toContain("curl");
    expect(payload).toContain("[redacted]");
    expect(payload).not.toContain(secret);
    expect(runs.traceJsonl(runId)).not.toContain(secret);
  });

  it("an allowed command runs in the warm sandbox with the run_tests limits and a changed-path list, and the trace has its figures", async () => {
    const sandbox = new FakeSandbox("container", () =>
      sandboxResult({
        stdout: "checked\n",
        stderr: "w",
        duration_ms: 42,
        changed: { status: "listed", paths: ["src/linkcheck.js", "tmp.txt"], truncated: false },
        links_left_out: { count: 1, by_reason: { dangling: 1 }, paths: [{ path: "src/gone.js", reason: "dangling" }] },
      }),
    );
    const { runs, runId, ws } = await start(sandbox, [call("c1", ["node", "--check", "src/linkcheck.js"]), PARK]);
    expect((await runs.settled(runId)).status).toBe("awaiting_approval");
    expect(sandbox.execs).toHaveLength(1);
    const req = sandbox.execs[0]!;
    expect(req.argv).toEqual(["node", "--check", "src/linkcheck.js"]);
    expect(req.listChanged).toEqual({ maxPaths: 100 });
    expect(req.outputCapBytes).toBe(1_048_576);
    expect(req.env).toEqual({});
    const r = observed(runs, runId, "c1")!;
    expect(r.ok).toBe(true);
    expect(r.data).toMatchObject({
      exit_code: 0,
      stdout: "checked\n",
      stderr: "w",
      truncated: false,
      changed_in_sandbox: { paths: ["src/linkcheck.js", "tmp.txt"], truncated: false },
      links_left_out: { count: 1, by_reason: { dangling: 1 }, paths: [{ path: "src/gone.js", reason: "dangling" }] },
    });
    expect(String((r.data as { note: string }).note)).toMatch(/discarded.*apply_patch is the only way/);
    expect(events(runs, runId, "tool_observed", "c1")[0]?.payload).toMatchObject({
      tool: "run_command",
      argv: ["node", "--check", "src/linkcheck.js"],
      decision: "allow",
      rule: "policy:interactive:allow:node --check <path>",
      exit_code: 0,
      duration_ms: 42,
      stdout_bytes: 8,
      stderr_bytes: 1,
      truncated: false,
      changed_in_sandbox: 2,
    });
    expect(fs.existsSync(path.join(ws, "tmp.txt"))).toBe(false);
  });

  it("output is cut to run_tests' tail size and flagged; a runner cap hit and its limits are passed through", async () => {
    const long = `${"x".repeat(10_000)}\nTAIL\n`;
    const sandbox = new FakeSandbox("container", () => sandboxResult({ stdout: long, truncated: true, limits: ["output"] }));
    const { runs, runId } = await start(sandbox, [call("c1", ["node", "--check", "src/linkcheck.js"]), PARK]);
    await runs.settled(runId);
    const r = observed(runs, runId, "c1")!;
    const data = r.data as { stdout: string; truncated: boolean; output_truncated: boolean; limits: string[]; stdout_bytes: number };
    expect(Buffer.byteLength(data.stdout)).toBeLessThanOrEqual(4096);
    expect(data.stdout.endsWith("TAIL\n")).toBe(true);
    expect(data).toMatchObject({ truncated: true, output_truncated: true, limits: ["output"], stdout_bytes: long.length });
    expect(r.truncated).toBe(true);
    expect(events(runs, runId, "tool_observed", "c1")[0]?.payload).toMatchObject({ truncated: true, output_cut: true, stdout_bytes: long.length });
  });

  it("a sandbox that cannot list its changes says so instead of an empty list", async () => {
    const sandbox = new FakeSandbox("container");
    const { runs, runId } = await start(sandbox, [call("c1", ["node", "--check", "src/linkcheck.js"]), PARK]);
    await runs.settled(runId);
    expect(observed(runs, runId, "c1")!.data).toMatchObject({ changed_in_sandbox: { unavailable: expect.stringMatching(/did not report/) } });
  });

  it("trusted_local: a proposed run_command is refused as tool_unavailable and nothing runs on the host", async () => {
    const sandbox = new FakeSandbox("trusted_local");
    const { runs, runId } = await start(sandbox, [call("c1", ["node", "--check", "src/linkcheck.js"]), PARK]);
    expect((await runs.settled(runId)).status).toBe("awaiting_approval");
    expect(observed(runs, runId, "c1")?.error?.code).toBe("tool_unavailable");
    expect(sandbox.sessions).toBe(0);
    expect(events(runs, runId, "tool_observed", "c1")[0]?.payload).toMatchObject({ decision: "unavailable", rule: "backend:trusted_local" });
  });
});

describe("run_command on the real trusted_local backend", () => {
  it("regression: a command the policy would allow still never runs as a host process", async () => {
    const marker = path.join(root, `host-marker-${++n}`);
    const replay = path.join(root, `replay-local-${n}.json`);
    const argv = ["node", "--check", "--require", path.join(root, "never.cjs"), "src/linkcheck.js"];
    fs.writeFileSync(path.join(root, "never.cjs"), `require("node:fs").writeFileSync(${JSON.stringify(marker)}, "ran on the host")\n`);
    fs.writeFileSync(replay, JSON.stringify({ schema_version: 1, decisions: [call("c1", argv), PARK] }));
    // a daemon policy whose (deliberately loose) entry allows this very argv: only the backend stops it
    const policy = { file: { schema_version: 1 as const, commands: { allow: [["node", "--check", "..."]] } }, source: "/etc/policy.json", digest: null };
    const runs = createRunService({ stateDir: path.join(root, `state-local-${n}`), executorFactory: () => new LocalExecutor(), policy });
    services.push(runs);
    const created = await runs.createRun({
      workspace: path.join(root, `ws-local-${n}`),
      fixtureDir: LINKCHECK,
      model: "replay",
      replayPath: replay,
      trustReplayFile: true,
      backend: "trusted_local",
    });
    expect((await runs.settled(created.run_id)).status).toBe("awaiting_approval");
    expect(observed(runs, created.run_id, "c1")?.error?.code).toBe("tool_unavailable");
    expect(fs.existsSync(marker)).toBe(false);
  });
});

describe("run_command: an unlisted command asks, bound like a write", () => {
  it("waits with the exact command pending, runs it only once approved, and records who approved it", async () => {
    const sandbox = new FakeSandbox("container", () => sandboxResult({ stdout: "v20\n" }));
    const { runs, runId } = await start(sandbox, [call("c1", ["node", "--version"]), PARK]);
    const waiting = await runs.settled(runId);
    expect(waiting.status).toBe("awaiting_approval");
    expect(waiting.pending_action).toMatchObject({ tool: "run_command", command: { argv: ["node", "--version"], rule: "policy:interactive:tools.command" } });
    expect(sandbox.execs).toEqual([]);
    expect(events(runs, runId, "approval_requested", "c1")[0]?.payload).toMatchObject({ argv: ["node", "--version"], decision: "ask" });

    await runs.approve(runId, waiting.pending_action!.action_id);
    expect((await runs.settled(runId)).pending_action?.call_id).toBe("park");
    expect(sandbox.execs.map((e) => e.argv)).toEqual([["node", "--version"]]);
    expect(observed(runs, runId, "c1")).toMatchObject({ ok: true, data: { stdout: "v20\n" } });
    expect(events(runs, runId, "approval_recorded", "c1")[0]?.payload).toMatchObject({ decision: "approved", by: "user" });
    expect(events(runs, runId, "tool_observed", "c1")[0]?.payload).toMatchObject({
      decision: "ask",
      approved_by: "user",
      rule: "policy:interactive:tools.command",
    });
    // a command is not a write: no intent, no receipt, no write counted
    expect(runs.ledger.listEvents(runId, 0).filter((e) => e.type === "action_intent" || e.type === "action_written")).toEqual([]);
    expect(runs.getRun(runId).counters.writes).toBe(0);
  });

  it("an approval after the workspace changed is stale: nothing runs, the model is told, the run goes on", async () => {
    const sandbox = new FakeSandbox("container");
    const { runs, runId, ws } = await start(sandbox, [call("c1", ["node", "--version"]), PARK]);
    const waiting = await runs.settled(runId);
    fs.appendFileSync(path.join(ws, "notes.txt"), "edited by someone else\n");
    const refused = await runs.approve(runId, waiting.pending_action!.action_id).then(
      () => "no error",
      (err: unknown) => (isMiniAgentError(err) ? err.code : "other"),
    );
    expect(refused).toBe("approval_stale");
    expect((await runs.settled(runId)).pending_action?.call_id).toBe("park");
    expect(sandbox.execs).toEqual([]);
    expect(observed(runs, runId, "c1")?.error?.code).toBe("approval_stale");
    expect(runs.ledger.findApproval(runId, waiting.pending_action!.action_id)).toBeUndefined();
  });

  it("a rejection is sealed with its reason and reaches the model; nothing runs", async () => {
    const sandbox = new FakeSandbox("container");
    const { runs, runId } = await start(sandbox, [call("c1", ["node", "--version"]), PARK]);
    const waiting = await runs.settled(runId);
    await runs.reject(runId, waiting.pending_action!.action_id, "no version probing");
    expect((await runs.settled(runId)).pending_action?.call_id).toBe("park");
    expect(sandbox.execs).toEqual([]);
    expect(observed(runs, runId, "c1")).toMatchObject({
      ok: false,
      error: { code: "approval_rejected", message: expect.stringContaining("no version probing") },
    });
    expect(runs.ledger.findApproval(runId, waiting.pending_action!.action_id)).toMatchObject({ decision: "rejected", reason: "no version probing" });
  });

  it("regression: a daemon stopped while an approved command ran neither drops the call nor treats it as an uncertain write; resume runs it again", async () => {
    const sandbox = new FakeSandbox("container", () => sandboxResult({ stdout: "second\n" }));
    const { runs, runId, stateDir } = await start(sandbox, [call("c1", ["node", "--version"]), PARK]);
    const waiting = await runs.settled(runId);
    sandbox.hold = true;
    const approving = runs.approve(runId, waiting.pending_action!.action_id);
    await approving;
    for (let i = 0; i < 200 && sandbox.execs.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(sandbox.execs).toHaveLength(1);
    await runs.shutdown();

    sandbox.hold = false;
    const again = createRunService({ stateDir, executorFactory: () => sandbox });
    services.push(again);
    await again.recoverAtStartup();
    expect(observed(again, runId, "c1")).toBeUndefined();
    expect(again.getRun(runId).status).toBe("interrupted");
    await again.resume(runId);
    const after = await again.settled(runId);
    expect(after.status).toBe("awaiting_approval");
    expect(after.pending_action?.call_id).toBe("park");
    expect(sandbox.execs.map((e) => e.argv)).toEqual([
      ["node", "--version"],
      ["node", "--version"],
    ]);
    expect(observed(again, runId, "c1")).toMatchObject({ ok: true, data: { stdout: "second\n" } });
  });
});
