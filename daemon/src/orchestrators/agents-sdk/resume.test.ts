import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { ActiveRun } from "../../runtime/active-run.js";
import { approveAction } from "../../runtime/approval-flow.js";
import type { RuntimeDeps } from "../../runtime/deps.js";
import { createRunService, type RunServiceImpl } from "../../runtime/service-impl.js";
import { toolContextOf } from "../../runtime/tool-context.js";
import { LocalExecutor } from "../../sandbox/local-executor.js";
import { verdictFor } from "./resume.js";

/**
 * The re-check before a saved RunState is resumed: the approval recorded in
 * the ledger is applied to the SDK only while its binding and the workspace
 * digest still hold. Real ledger, real workspace (trusted_local, the
 * fixture's own replay); the approval is recorded the way the approve call
 * records it for this orchestrator (deferWrite), and the resumed drive's
 * check runs before anything is written.
 */
const LINKCHECK = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../../fixtures/linkcheck");
const dirs: string[] = [];
const services: RunServiceImpl[] = [];
afterEach(async () => {
  for (const s of services.splice(0)) await s.shutdown();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

async function approvedButNotWritten() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "sdk-resume-"));
  dirs.push(root);
  const svc = createRunService({ stateDir: path.join(root, "state"), executorFactory: () => new LocalExecutor(), logger: pino({ level: "silent" }) });
  services.push(svc);
  const ws = path.join(root, "ws");
  const created = await svc.createRun({
    workspace: ws,
    fixtureDir: LINKCHECK,
    model: "replay",
    trustReplayFile: false,
    backend: "trusted_local",
    orchestrator: "agents-sdk",
  });
  const view = await svc.settled(created.run_id);
  expect(view.status).toBe("awaiting_approval");
  // the service's own deps: the same ledger, tools and key the approve call uses
  const deps = (svc as unknown as { deps: RuntimeDeps }).deps;
  const runId = created.run_id;
  const actionId = view.pending_action!.action_id;
  const ctx = toolContextOf(deps.ledger.getRun(runId).record);
  await approveAction(deps, runId, deps.ledger.findAction(runId, actionId)!, ctx, await deps.approvalKey(), "user", { deferWrite: true });
  const row = deps.ledger.findAction(runId, actionId)!;
  const scope = { deps, active: new ActiveRun(runId, new LocalExecutor(), ctx, null, { now: () => 0 }, 0), halted: null };
  return { ws, deps, runId, row, scope };
}

describe("agents-sdk resume: the ledger's decision, re-checked, is what the saved RunState gets", () => {
  it("an approval whose binding and workspace digest hold is applied as approve, and nothing is written yet", async () => {
    const { deps, runId, row, scope } = await approvedButNotWritten();
    expect(row.status).toBe("approved");
    expect(await verdictFor(scope, row.record.call_id)).toEqual({ kind: "approve" });
    expect(deps.ledger.findAction(runId, row.record.action_id)!.status).toBe("approved");
  });

  it("a workspace changed after the approval: the approval goes stale (recorded, the model told to re-read) and the SDK gets a rejection", async () => {
    const { ws, deps, runId, row, scope } = await approvedButNotWritten();
    fs.appendFileSync(path.join(ws, "notes.txt"), "edited by someone else\n");
    const verdict = await verdictFor(scope, row.record.call_id);
    expect(verdict.kind).toBe("reject");
    expect(deps.ledger.findAction(runId, row.record.action_id)!.status).toBe("stale");
    const last = deps.ledger.listMessages(runId).at(-1)!;
    expect(last).toMatchObject({ role: "tool", result: { call_id: row.record.call_id, ok: false, error: { code: "approval_stale" } } });
    expect(verdict).toEqual({ kind: "reject", message: (last as { result: { error: { message: string } } }).result.error.message });
    const stale = deps.ledger
      .listEvents(runId)
      .filter((e) => e.type === "approval_recorded")
      .map((e) => e.payload);
    expect(stale.at(-1)).toMatchObject({ decision: "stale" });
    expect(fs.existsSync(path.join(ws, row.record.path))).toBe(false);
  });

  it("a saved state for a call the ledger has moved past is not used", async () => {
    const { scope } = await approvedButNotWritten();
    expect(await verdictFor(scope, "call_not_the_last")).toMatchObject({ kind: "disagree" });
  });
});
