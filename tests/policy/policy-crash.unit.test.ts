import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { driverArgs } from "../kit/driver.js";
import type { RunView } from "../../daemon/src/runtime/service.js";

/**
 * A write the policy approved is as crash-safe as one a person approved: the
 * same intent -> write -> receipt, so a SIGKILL in between leaves the facts
 * resume's three-state check needs, and the file is written exactly once.
 */
// the recovery tests' driver, on trusted_local (no engine) with a daemon policy approving tests/**
const DRIVER = path.join(path.dirname(fileURLToPath(import.meta.url)), "../recovery/driver.ts");
const root = fs.mkdtempSync(path.join(os.tmpdir(), "ma-policy-crash-"));
let n = 0;
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

function drive(stateDir: string, args: string[], crashAt?: string): { signal: NodeJS.Signals | null; view: RunView | null } {
  const env: NodeJS.ProcessEnv = { ...process.env, MINI_AGENT_DRIVER_BACKEND: "trusted_local", MINI_AGENT_DRIVER_AUTO_EDIT: "tests/**" };
  delete env.MINI_AGENT_CRASH_AT;
  if (crashAt) env.MINI_AGENT_CRASH_AT = crashAt;
  const r = spawnSync(process.execPath, [...driverArgs(DRIVER), stateDir, ...args], { env, encoding: "utf8", timeout: 180_000 });
  const line = r.stdout.trim().split("\n").filter(Boolean).pop();
  return { signal: r.signal, view: line ? (JSON.parse(line) as RunView) : null };
}

function facts(stateDir: string) {
  const db = new Database(path.join(stateDir, "ledger.sqlite"), { readonly: true });
  try {
    const run = db.prepare("SELECT run_id FROM runs").get() as { run_id: string };
    const actions = db.prepare("SELECT path, status, receipt FROM actions ORDER BY rowid").all() as Array<{
      path: string;
      status: string;
      receipt: string | null;
    }>;
    const written = db.prepare("SELECT COUNT(*) AS n FROM events WHERE type = 'action_written'").get() as { n: number };
    const byPolicy = (db.prepare("SELECT record FROM approvals").all() as Array<{ record: string }>).map((r) => JSON.parse(r.record).reason);
    return { runId: run.run_id, actions, written: written.n, byPolicy };
  } finally {
    db.close();
  }
}

describe("a policy-approved write survives a crash like a person-approved one", () => {
  it.each([
    ["after_intent", "write"],
    ["after_write_before_receipt", "recovered"],
  ])("killed %s: resume finishes it exactly once (receipt source %s), then the run goes on to the next prompt", (crashAt, source) => {
    const stateDir = path.join(root, `state-${++n}`);
    const ws = path.join(root, `ws-${n}`);
    const killed = drive(stateDir, ["create", ws], crashAt);
    expect(killed.signal).toBe("SIGKILL");
    const before = facts(stateDir);
    expect(before.actions).toMatchObject([{ path: "tests/test_agent_nested.js", status: "intent", receipt: null }]);
    expect(before.byPolicy).toEqual(["policy:interactive:auto_edit:tests/**"]);
    expect(fs.existsSync(path.join(ws, "tests/test_agent_nested.js"))).toBe(crashAt !== "after_intent");

    const resumed = drive(stateDir, ["resume", before.runId]).view;
    expect(resumed?.status, JSON.stringify(resumed)).toBe("awaiting_approval");
    expect(resumed?.pending_action).toMatchObject({ path: "src/linkcheck.js", rule: "policy:interactive:tools.write" });
    const after = facts(stateDir);
    expect(after.actions[0]).toMatchObject({ status: "receipted" });
    expect(JSON.parse(after.actions[0]!.receipt!).source).toBe(source);
    expect(after.written).toBe(1);
    expect(fs.readFileSync(path.join(ws, "tests/test_agent_nested.js"), "utf8")).toContain("checkLinks resolves relative links");
  });
});
