import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { PolicyFile } from "../../daemon/src/contracts/policy.js";
import { isMiniAgentError } from "../../daemon/src/errors.js";
import { BUILTIN_DAEMON_POLICY, type DaemonPolicy } from "../../daemon/src/policy/daemon-policy.js";
import { decideByPolicy } from "../../daemon/src/policy/effective.js";
import { createRunService, type RunServiceImpl } from "../../daemon/src/runtime/service-impl.js";
import type { CreateRunInput, RunView } from "../../daemon/src/runtime/service.js";
import { LocalExecutor } from "../../daemon/src/sandbox/local-executor.js";
import { startTestApi } from "../../daemon/src/api/server.testkit.js";
import { actionIdFor } from "../../daemon/src/tools/apply-patch.js";
import { workspaceDigest } from "../../daemon/src/workspace/version.js";
import { rawRequest, REPO } from "../e2e/harness.js";

/**
 * The policy through real runs: the real RunService, ledger, tools and
 * Verifier on the linkcheck fixture's canonical replay (two writes: the test
 * file tests/test_agent_nested.js, then src/linkcheck.js), on the
 * trusted_local backend so no engine is needed; the policy path is the same
 * on every backend.
 */
const FIXTURE = path.join(REPO, "fixtures/linkcheck");
const TASK = JSON.parse(fs.readFileSync(path.join(FIXTURE, "task.json"), "utf8")) as CreateRunInput["taskSpec"];
const root = fs.mkdtempSync(path.join(os.tmpdir(), "ma-policy-runs-"));
const services: RunServiceImpl[] = [];
let n = 0;

afterAll(async () => {
  for (const s of services) await s.shutdown().catch(() => undefined);
  fs.rmSync(root, { recursive: true, force: true });
});

function daemonPolicy(file: Omit<PolicyFile, "schema_version">): DaemonPolicy {
  return { file: { schema_version: 1, ...file }, source: "/etc/policy.json", digest: "0".repeat(64) };
}

function service(policy: DaemonPolicy = BUILTIN_DAEMON_POLICY, stateDir = path.join(root, `state-${++n}`)): RunServiceImpl {
  const s = createRunService({ stateDir, executorFactory: () => new LocalExecutor(), policy });
  services.push(s);
  return s;
}

async function start(runs: RunServiceImpl, extra: Partial<CreateRunInput> = {}): Promise<{ run: RunView; ws: string }> {
  const ws = extra.workspace ?? path.join(root, `ws-${++n}`);
  const created = await runs.createRun({ workspace: ws, fixtureDir: FIXTURE, model: "replay", trustReplayFile: false, backend: "trusted_local", ...extra });
  return { run: await runs.settled(created.run_id), ws };
}

/** a task-spec run on a copy of the fixture's repo (the workspace exists, so it can carry its own rules file) */
function workspaceWithRules(rules: string): string {
  const ws = path.join(root, `ws-${++n}`);
  fs.cpSync(path.join(FIXTURE, "repo"), ws, { recursive: true });
  fs.mkdirSync(path.join(ws, ".mini-agent"));
  fs.writeFileSync(path.join(ws, ".mini-agent/policy.json"), rules);
  return ws;
}
const taskSpecRun = (ws: string): Partial<CreateRunInput> => ({
  workspace: ws,
  taskSpec: TASK,
  controlDir: path.join(FIXTURE, "control"),
  replayPath: path.join(FIXTURE, "replay.json"),
  trustReplayFile: true,
  fixtureDir: undefined,
});

async function events(runs: RunServiceImpl, runId: string, type: string) {
  return (await runs.events(runId, 0, 0)).filter((e) => e.type === type);
}

/** counts of every table in the ledger: the "nothing changed" witness */
function ledgerCounts(runs: RunServiceImpl): Record<string, number> {
  const db = runs.ledger.db;
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name").all() as Array<{ name: string }>;
  return Object.fromEntries(tables.map((t) => [t.name, (db.prepare(`SELECT COUNT(*) AS n FROM "${t.name}"`).get() as { n: number }).n]));
}

async function errorOf(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await p;
  } catch (err) {
    if (isMiniAgentError(err)) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error("expected a MiniAgentError, but nothing was thrown");
}
const codeOf = async (p: Promise<unknown>) => (await errorOf(p)).code;

/** approves every pending write like a person would, counting the prompts */
async function approveAll(runs: RunServiceImpl, run: RunView): Promise<{ run: RunView; prompts: number }> {
  let prompts = 0;
  let now = run;
  while (now.status === "awaiting_approval" && prompts < 10) {
    prompts++;
    await runs.approve(now.run_id, now.pending_action!.action_id);
    now = await runs.settled(now.run_id);
  }
  return { run: now, prompts };
}

describe("allow / ask / deny on writes, through a real run", () => {
  it("interactive (the built-in policy): both writes ask, each prompt names the rule that asked, a person's approval is recorded by=user", async () => {
    const runs = service();
    const { run } = await start(runs);
    expect(run.status).toBe("awaiting_approval");
    expect(run.pending_action).toMatchObject({ path: "tests/test_agent_nested.js", rule: "policy:interactive:tools.write" });
    const done = await approveAll(runs, run);
    expect(done).toMatchObject({ prompts: 2, run: { status: "completed" } });
    const asked = await events(runs, run.run_id, "approval_requested");
    expect(asked.map((e) => e.payload.rule)).toEqual(["policy:interactive:tools.write", "policy:interactive:tools.write"]);
    expect((await events(runs, run.run_id, "approval_recorded")).map((e) => e.payload.by)).toEqual(["user", "user"]);
    // the run's policy is traced once, at creation
    const created = await events(runs, run.run_id, "run_created");
    expect(created[0]?.payload.policy).toMatchObject({ profile: "interactive", source: "built-in", workspace_file: null, tightened_by_workspace: false });
  });

  it("auto_edit tests/**: the test write is approved by the policy through the same bound, sealed approval (intent, write, receipt); the src write still asks", async () => {
    const runs = service(daemonPolicy({ auto_edit: ["tests/**"] }));
    const { run, ws } = await start(runs);
    // the first write happened without a prompt; the run waits at the second
    expect(run.status).toBe("awaiting_approval");
    expect(run.pending_action).toMatchObject({ path: "src/linkcheck.js", rule: "policy:interactive:tools.write" });
    expect(fs.existsSync(path.join(ws, "tests/test_agent_nested.js"))).toBe(true);
    const auto = runs.ledger.listActions(run.run_id).find((a) => a.record.path === "tests/test_agent_nested.js")!;
    expect(auto.status).toBe("receipted");
    expect(auto.intent).not.toBeNull();
    // sealed like a person's approval, bound to the action and the workspace digest it was proposed against
    expect(runs.ledger.findApproval(run.run_id, auto.record.action_id)).toMatchObject({
      decision: "approved",
      reason: "policy:interactive:auto_edit:tests/**",
      binding: { action_id: auto.record.action_id, workspace_digest: auto.record.workspace_digest },
    });
    const recorded = await events(runs, run.run_id, "approval_recorded");
    expect(recorded.map((e) => [e.action_id, e.payload])).toEqual([
      [auto.record.action_id, { decision: "approved", by: "policy:interactive:auto_edit:tests/**" }],
    ]);
    const order = (await runs.events(run.run_id, 0, 0)).filter((e) => e.action_id === auto.record.action_id).map((e) => e.type);
    expect(order).toEqual(["approval_recorded", "action_intent", "action_written", "action_receipt"]);
    const done = await approveAll(runs, run);
    expect(done).toMatchObject({ prompts: 1, run: { status: "completed" } });
    expect((await events(runs, run.run_id, "approval_requested")).length).toBe(1);
  });

  it("tools.write deny: each write is a policy_denied observation naming the rule; nothing is prepared, nothing is written; approving the denied call's action id over the API is refused and changes nothing", async () => {
    // the id a proposal gets (run, call, arguments, workspace digest), checked against a real pending action first
    const replay = JSON.parse(fs.readFileSync(path.join(FIXTURE, "replay.json"), "utf8")) as {
      decisions: Array<{ kind: string; call?: { call_id: string; name: string; arguments: Record<string, unknown> } }>;
    };
    const addTest = replay.decisions.find((d) => d.call?.call_id === "call_02_add_test")!.call!;
    const idOf = async (runs: RunServiceImpl, runId: string) => {
      const rec = runs.ledger.getRun(runId).record;
      return actionIdFor({
        runId,
        callId: addTest.call_id,
        name: addTest.name,
        args: addTest.arguments,
        manifestDigest: await workspaceDigest(rec.workspace, rec.control_dir),
      });
    };
    const asking = service();
    const asked = await start(asking);
    expect(await idOf(asking, asked.run.run_id)).toBe(asked.run.pending_action?.action_id);

    const runs = service(daemonPolicy({ tools: { write: "deny" } }));
    const { run, ws } = await start(runs);
    expect(run.status).toBe("failed");
    const told = runs.ledger.listMessages(run.run_id).flatMap((m) => (m.role === "tool" && m.result.error?.code === "policy_denied" ? [m.result] : []));
    expect(told.map((r) => r.call_id)).toEqual(["call_02_add_test", "call_04_fix"]);
    expect(told[0]?.error?.message).toContain("policy:interactive:tools.write");
    expect(runs.ledger.listActions(run.run_id)).toEqual([]);
    expect(fs.existsSync(path.join(ws, "tests/test_agent_nested.js"))).toBe(false);
    // deny is final: the denied call's action id, approved over the real API, is refused and changes nothing
    const api = await startTestApi({ runService: runs }, "ma-policy-api-");
    try {
      const before = ledgerCounts(runs);
      const denied = await idOf(runs, run.run_id);
      const res = await rawRequest(api.socket, "POST", `/v1/runs/${run.run_id}/actions/${denied}/approve`, "{}");
      expect(res.status).toBe(404);
      expect(res.json).toMatchObject({ error: { code: "approval_unknown" } });
      expect(ledgerCounts(runs)).toEqual(before);
      expect(fs.existsSync(path.join(ws, "tests/test_agent_nested.js"))).toBe(false);
    } finally {
      await api.stop();
    }
  });

  it("regression: an approval over the API could run an action the run's policy denies (deny is final at approve too: policy_denied, nothing written, ledger unchanged)", async () => {
    const runs = service();
    const { run, ws } = await start(runs);
    const pending = run.pending_action!;
    // the run's stored policy says deny for this path (as a run created with tools.write deny would)
    const stored = runs.ledger.getRun(run.run_id).record;
    runs.ledger.updateRun(run.run_id, { record: { ...stored, policy: { ...stored.policy!, tools: { ...stored.policy!.tools, write: "deny" } } } });
    const before = ledgerCounts(runs);
    const err = await errorOf(runs.approve(run.run_id, pending.action_id));
    expect(err.code).toBe("policy_denied");
    expect(err.message).toContain("policy:interactive:tools.write");
    expect(ledgerCounts(runs)).toEqual(before);
    expect(fs.existsSync(path.join(ws, pending.path))).toBe(false);
    expect(runs.getRun(run.run_id).status).toBe("awaiting_approval");
  });

  it("the task's own deny beats a policy auto-approval: auto_edit ** never makes a non-writable path writable", async () => {
    const runs = service(daemonPolicy({ auto_edit: ["**"] }));
    const task = { ...TASK!, writable: ["src/**"], creatable: [] };
    const ws = workspaceWithRules("{}");
    const { run } = await start(runs, { ...taskSpecRun(ws), taskSpec: task });
    const told = runs.ledger.listMessages(run.run_id).flatMap((m) => (m.role === "tool" && m.result.call_id === "call_02_add_test" ? [m.result] : []));
    expect(told[0]?.error?.code).toBe("not_writable");
    expect(fs.existsSync(path.join(ws, "tests/test_agent_nested.js"))).toBe(false);
  });
});

describe("profiles", () => {
  const file = daemonPolicy({ default_profile: "interactive", profiles: { ci: { auto_edit: ["tests/**", "src/**"] } } });

  it("the ci profile's auto_edit approves both writes (no prompt); the same daemon's interactive run asks twice", async () => {
    const runs = service(file);
    const ci = await start(runs, { policyProfile: "ci" });
    expect(ci.run.status).toBe("completed");
    expect(await events(runs, ci.run.run_id, "approval_requested")).toEqual([]);
    expect((await events(runs, ci.run.run_id, "approval_recorded")).map((e) => e.payload.by)).toEqual([
      "policy:ci:auto_edit:tests/**",
      "policy:ci:auto_edit:src/**",
    ]);
    expect((await events(runs, ci.run.run_id, "run_created"))[0]?.payload.policy).toMatchObject({ profile: "ci", source: "policy.json" });
    const interactive = await start(runs);
    expect((await approveAll(runs, interactive.run)).prompts).toBe(2);
  });

  it("eval (built-in) denies unlisted commands where interactive asks, and still runs allowlisted checks; eval approves the task's writable writes by policy, interactive asks", async () => {
    const runs = service();
    const ev = await start(runs, { policyProfile: "eval" });
    const policy = runs.ledger.getRun(ev.run.run_id).record.policy!;
    expect(policy.profile).toBe("eval");
    expect(decideByPolicy(policy, { class: "command", argv: ["make", "lint"] })).toEqual({ verdict: "deny", rule: "policy:eval:commands.unlisted" });
    expect(decideByPolicy(policy, { class: "command", argv: ["go", "vet", "./..."] })).toEqual({ verdict: "allow", rule: "policy:eval:allow:go vet <pkg>..." });
    // auto_edit_writable: nobody is asked; each write is approved through the recorded approval path
    expect(ev.run).toMatchObject({ status: "completed", pending_action: null });
    const byPolicy = (await events(runs, ev.run.run_id, "approval_recorded")).map((e) => e.payload);
    expect(byPolicy).toEqual([
      { decision: "approved", by: "policy:eval:auto_edit_writable" },
      { decision: "approved", by: "policy:eval:auto_edit_writable" },
    ]);
    expect(await events(runs, ev.run.run_id, "approval_requested")).toEqual([]);
    const it_ = await start(runs);
    expect(it_.run.pending_action?.rule).toBe("policy:interactive:tools.write");
    expect(decideByPolicy(runs.ledger.getRun(it_.run.run_id).record.policy!, { class: "command", argv: ["make", "lint"] }).verdict).toBe("ask");
  });

  it("a run keeps the policy it was created with: a daemon restarted with a stricter policy file does not change it", async () => {
    const stateDir = path.join(root, `state-${++n}`);
    const first = service(daemonPolicy({ auto_edit: ["tests/**"] }), stateDir);
    const { run, ws } = await start(first);
    expect(run.pending_action?.path).toBe("src/linkcheck.js");
    await first.shutdown();
    const second = service(daemonPolicy({ tools: { write: "deny" } }), stateDir);
    await second.recoverAtStartup();
    await second.approve(run.run_id, run.pending_action!.action_id);
    expect((await second.settled(run.run_id)).status).toBe("completed");
    expect(fs.readFileSync(path.join(ws, "src/linkcheck.js"), "utf8")).toContain("path.dirname(docAbs)");
  });
});

describe("the workspace's .mini-agent/policy.json only tightens", () => {
  const loosen = JSON.stringify({
    tools: { write: "allow", command: "allow" },
    auto_edit: ["src/**", "tests/**"],
    commands: { allow: [["curl", "https://example.com"]], deny_tokens: [] },
  });

  it("a file that tries to auto-approve src/** and tests/** (and to allow writes) changes nothing: both writes still ask, by the daemon's rule", async () => {
    const runs = service();
    const ws = workspaceWithRules(loosen);
    const { run } = await start(runs, taskSpecRun(ws));
    expect(run.pending_action).toMatchObject({ path: "tests/test_agent_nested.js", rule: "policy:interactive:tools.write" });
    expect((await events(runs, run.run_id, "run_created"))[0]?.payload.policy).toMatchObject({
      workspace_file: ".mini-agent/policy.json",
      tightened_by_workspace: true,
    });
    expect((await approveAll(runs, run)).prompts).toBe(2);
  });

  it("a file that switches auto_edit_writable off makes an eval run ask for its writes again", async () => {
    const runs = service();
    const ws = workspaceWithRules(JSON.stringify({ auto_edit_writable: false }));
    const { run } = await start(runs, { ...taskSpecRun(ws), policyProfile: "eval" });
    expect(run).toMatchObject({
      status: "awaiting_approval",
      pending_action: { path: "tests/test_agent_nested.js", rule: "workspace:auto_edit_writable (off)" },
    });
  });

  it("a file that tries to allow a denied command (curl) changes nothing: the run's policy still denies it", async () => {
    const runs = service();
    const ws = workspaceWithRules(loosen);
    const { run } = await start(runs, taskSpecRun(ws));
    const policy = runs.ledger.getRun(run.run_id).record.policy!;
    expect(decideByPolicy(policy, { class: "command", argv: ["curl", "https://example.com"] })).toEqual({
      verdict: "deny",
      rule: "policy:interactive:deny_token:curl",
    });
    // and an unlisted command is not allowed by the workspace's tools.command allow
    expect(decideByPolicy(policy, { class: "command", argv: ["make"] }).verdict).toBe("ask");
  });

  it("a file that takes the daemon's auto-approval away does: the test write asks, naming the workspace rule", async () => {
    const runs = service(daemonPolicy({ auto_edit: ["tests/**"] }));
    const ws = workspaceWithRules(JSON.stringify({ auto_edit: [] }));
    const { run } = await start(runs, taskSpecRun(ws));
    expect(run.pending_action).toMatchObject({ path: "tests/test_agent_nested.js", rule: "workspace:auto_edit (not listed)" });
  });

  it("a broken file refuses the run with policy_invalid naming the file and line, before anything is prepared", async () => {
    const runs = service();
    const repo = path.join(root, `fixture-${++n}`);
    fs.cpSync(FIXTURE, repo, { recursive: true });
    fs.mkdirSync(path.join(repo, "repo/.mini-agent"));
    fs.writeFileSync(path.join(repo, "repo/.mini-agent/policy.json"), '{\n  "auto_edit": ["tests/**"],\n  "allow_everything": true\n}\n');
    const ws = path.join(root, `ws-${++n}`);
    const err = await errorOf(runs.createRun({ workspace: ws, fixtureDir: repo, model: "replay", trustReplayFile: true, backend: "trusted_local" }));
    expect(err.code).toBe("policy_invalid");
    expect(err.message).toContain(".mini-agent/policy.json:3");
    expect(err.message).toContain("allow_everything");
    expect(fs.existsSync(ws)).toBe(false);
    expect(runs.listRuns()).toEqual([]);
  });

  it.each([
    ["ci", ["node", "-e", "process.exit(0)"], "is refused: it is denied by policy:ci:commands.unlisted"],
    ["interactive", ["node", "-e", "process.exit(0)"], "is refused: it would need an approval (policy:interactive:tools.command)"],
    ["interactive", ["curl", "https://example.com"], "is refused: it is denied by policy:interactive:deny_token:curl"],
    // allowed by the command policy, and still refused here: trusted_local would run it as a host process
    ["ci", ["node", "--check", "src/linkcheck.js"], "is refused: it runs only in a container sandbox, never as a host process"],
  ] as const)(
    "regression: a workspace file's verify_commands bypassed the command policy (%s, %j): the run is refused at creation with the rule, nothing created",
    async (profile, command, expected) => {
      const runs = service();
      const ws = workspaceWithRules(JSON.stringify({ verify_commands: [{ name: "extra", command }] }));
      const before = fs.readdirSync(ws).sort();
      const err = await errorOf(runs.createRun({ ...taskSpecRun(ws), policyProfile: profile, model: "replay", backend: "trusted_local" } as CreateRunInput));
      expect(err.code).toBe("policy_denied");
      expect(err.message).toContain(`.mini-agent/policy.json: verify command "extra" ${JSON.stringify(command)} ${expected}`);
      expect(runs.listRuns()).toEqual([]);
      expect(fs.readdirSync(ws).sort()).toEqual(before);
    },
  );

  it("a rules file that is a link is refused, never followed", async () => {
    const runs = service();
    const ws = workspaceWithRules("{}");
    const elsewhere = path.join(root, `elsewhere-${++n}.json`);
    fs.writeFileSync(elsewhere, "{}");
    fs.rmSync(path.join(ws, ".mini-agent/policy.json"));
    fs.symlinkSync(elsewhere, path.join(ws, ".mini-agent/policy.json"));
    expect(
      await codeOf(runs.createRun({ ...taskSpecRun(ws), workspace: ws, model: "replay", backend: "trusted_local", trustReplayFile: true } as CreateRunInput)),
    ).toBe("policy_invalid");
    expect(runs.listRuns()).toEqual([]);
  });
});
