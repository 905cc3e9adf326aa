import fs from "node:fs";
import { createCheckApprovals } from "./approvals.js";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Agent, request } from "undici";
import { draftTask } from "../adhoc/index.js";
import { isMiniAgentError } from "../errors.js";
import { startTestApi } from "../api/server.testkit.js";
import type { RunService } from "../runtime/service.js";
import type { ChecksDeps } from "./ports.js";
import { createChecksService } from "./index.js";
import { BUILTIN_DAEMON_POLICY } from "../policy/daemon-policy.js";
import { resolveRunPolicy } from "../policy/run-policy.js";

/**
 * The workspace checks (what `mcp` calls) with a real drafter on a real folder
 * and a gate that says no: refused before any sandbox is asked for and before
 * anything is written. The proven path runs in tests/e2e/mcp.test.ts.
 */
const root = fs.mkdtempSync(path.join(os.tmpdir(), "ma-checks-"));
const stateDir = path.join(root, "state");
const ws = path.join(root, "proj");
fs.mkdirSync(stateDir, { mode: 0o700 });
fs.mkdirSync(path.join(ws, "tests"), { recursive: true });
fs.writeFileSync(path.join(ws, "tests/test_a.js"), "");
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

function deps(over: Partial<ChecksDeps> = {}): ChecksDeps & { sandboxesAsked: number } {
  const d = {
    sandboxesAsked: 0,
    draft: (input: Parameters<ChecksDeps["draft"]>[0]) => draftTask(input, { stateDir, homeDirs: [] }),
    gate: async () => ({
      ok: false as const,
      code: "isolation_unverified" as const,
      reason: "report_stale",
      message: "no isolation report exists",
      refresh_command: "mini-agent-client probe",
    }),
    executorFor: () => {
      d.sandboxesAsked++;
      throw new Error("no sandbox may be asked for when the gate refuses");
    },
    policyFor: (workspace: string) => resolveRunPolicy(BUILTIN_DAEMON_POLICY, undefined, workspace).policy,
    stateDir,
    knownSecrets: () => [],
    approvals: createCheckApprovals(),
    ...over,
  };
  return d;
}

async function codeOf(p: Promise<unknown>): Promise<{ code: string; message: string; details?: Record<string, unknown> }> {
  try {
    await p;
  } catch (err) {
    if (isMiniAgentError(err)) return { code: err.code, message: err.message, ...(err.details && { details: err.details }) };
    throw err;
  }
  throw new Error("expected a refusal");
}

describe("workspace checks refuse without a proven sandbox (no host fallback)", () => {
  it("refuses tests, baseline and verify with the reason and the probe command, asks for no sandbox and writes nothing", async () => {
    const d = deps();
    const checks = createChecksService(d);
    const test = "node --test tests/";
    for (const p of [checks.tests({ workspace: ws, test }), checks.begin({ workspace: ws, test })]) {
      const r = await codeOf(p);
      expect(r).toMatchObject({
        code: "isolation_unverified",
        details: { reason: "report_stale", refresh_command: "mini-agent-client probe", family: "node" },
      });
      expect(r.message).toContain("refresh with: mini-agent-client probe");
    }
    // verify without a baseline is refused before the gate is even asked
    expect(await codeOf(checks.verify({ workspace: ws, protect: [], test }))).toMatchObject({ code: "not_found" });
    expect(d.sandboxesAsked).toBe(0);
    expect(fs.readdirSync(stateDir)).toEqual([]);
  });

  it("sandbox_exec: the policy decides first; deny and ask open no sandbox even with a passing gate; allow still needs the gate", async () => {
    const d = deps({ gate: async () => ({ ok: true }) });
    const checks = createChecksService(d);
    expect(await codeOf(checks.exec({ workspace: ws, argv: ["curl", "http://127.0.0.1:9/"] }))).toMatchObject({ code: "policy_denied" });
    expect(await codeOf(checks.exec({ workspace: ws, argv: ["node", "-e", "1"] }))).toMatchObject({ code: "approval_required" });
    expect(d.sandboxesAsked).toBe(0);
    const gated = deps();
    expect(await codeOf(createChecksService(gated).exec({ workspace: ws, argv: ["node", "--check", "tests/test_a.js"] }))).toMatchObject({
      code: "isolation_unverified",
    });
    expect(gated.sandboxesAsked).toBe(0);
  });

  it("sandbox_exec: a command the policy asks about runs only after a person approved exactly that call, once, on the same workspace", async () => {
    const ok = deps({ gate: async () => ({ ok: true }) });
    const checks = createChecksService(ok);
    const argv = ["node", "-e", "1"];
    const asked = await codeOf(checks.exec({ workspace: ws, argv }));
    expect(asked).toMatchObject({ code: "approval_required", details: { argv } });
    const id = String(asked.details?.approval_id);
    expect(id).toMatch(/^chk_[0-9a-f]{20}$/);
    // the calling agent retrying before a person answered gets the same question, nothing runs
    expect(await codeOf(checks.exec({ workspace: ws, argv, approval_id: id }))).toMatchObject({ code: "approval_required" });
    // another argv with this id: not what the person was asked
    expect(await codeOf(checks.exec({ workspace: ws, argv: ["node", "-e", "2"], approval_id: id }))).toMatchObject({ code: "approval_stale" });
    expect(checks.decide(id, { decision: "approve" })).toMatchObject({ state: "approved", argv, workspace: fs.realpathSync(ws) });
    expect(() => checks.decide(id, { decision: "reject" })).toThrow(/already approved/);
    // approved: it goes on to the sandbox (this test's executor refuses, which proves it got there)
    await expect(checks.exec({ workspace: ws, argv, approval_id: id })).rejects.toThrow(/no sandbox may be asked for/);
    expect(ok.sandboxesAsked).toBe(1);
    // used once
    expect(await codeOf(checks.exec({ workspace: ws, argv, approval_id: id }))).toMatchObject({ code: "approval_unknown" });

    const again = String((await codeOf(checks.exec({ workspace: ws, argv }))).details?.approval_id);
    checks.decide(again, { decision: "approve" });
    fs.writeFileSync(path.join(ws, "tests/changed.js"), "");
    try {
      expect(await codeOf(checks.exec({ workspace: ws, argv, approval_id: again }))).toMatchObject({ code: "approval_stale" });
    } finally {
      fs.rmSync(path.join(ws, "tests/changed.js"));
    }
    const refused = String((await codeOf(checks.exec({ workspace: ws, argv }))).details?.approval_id);
    checks.decide(refused, { decision: "reject", reason: "not now" });
    expect(await codeOf(checks.exec({ workspace: ws, argv, approval_id: refused }))).toMatchObject({
      code: "approval_rejected",
      message: expect.stringContaining("not now"),
    });
    // an id for a command the policy allows is a mistake, not a pass
    expect(await codeOf(checks.exec({ workspace: ws, argv: ["node", "--check", "tests/test_a.js"], approval_id: refused }))).toMatchObject({
      code: "invalid_request",
    });
    expect(ok.sandboxesAsked).toBe(1);
  });

  it("names the family's own probe command for a family other than node", async () => {
    const checks = createChecksService(deps());
    const r = await codeOf(checks.tests({ workspace: ws, test: "python3 -m pytest" }));
    expect(r.details).toMatchObject({ family: "python", refresh_command: "mini-agent-client probe --family python" });
  });

  it("refuses the state dir and a system folder as a workspace the way `run --goal` does", async () => {
    const checks = createChecksService(deps({ gate: async () => ({ ok: true }) }));
    for (const folder of [stateDir, "/etc"])
      expect(await codeOf(checks.tests({ workspace: folder, test: "node --test tests/" }))).toMatchObject({ code: "invalid_workspace" });
  });

  it("a daemon without a container engine answers 503 runtime_unavailable on /v1/checks/*, never a host run", async () => {
    const api = await startTestApi({ runService: {} as RunService });
    const agent = new Agent({ connect: { socketPath: api.socket } });
    try {
      for (const p of ["/v1/checks/tests", "/v1/checks/exec", "/v1/checks/baseline", "/v1/checks/verify"]) {
        const res = await request(`http://localhost${p}`, {
          method: "POST",
          dispatcher: agent,
          body: JSON.stringify({ workspace: ws, ...(p.endsWith("exec") && { argv: ["node"] }) }),
          headers: { "content-type": "application/json" },
        });
        expect({ status: res.statusCode, body: await res.body.json() }).toMatchObject({ status: 503, body: { error: { code: "runtime_unavailable" } } });
      }
    } finally {
      await agent.close();
      await api.stop();
    }
  });
});
