import fs from "node:fs";
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
