import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunView } from "../../daemon/src/runtime/service.js";
import { containerExecutor, leftovers, tempDir } from "../runtime/harness.js";
import { driverArgs } from "../kit/driver.js";

process.env.TESTCONTAINERS_RYUK_DISABLED = "true";
const DRIVER = path.join(path.dirname(fileURLToPath(import.meta.url)), "driver.ts");

interface Outcome {
  signal: NodeJS.Signals | null;
  view: (RunView & { error?: undefined }) | { error: { code: string; message: string } } | null;
}

function drive(stateDir: string, args: string[], crashAt?: string): Outcome {
  const env = { ...process.env };
  delete env.MINI_AGENT_CRASH_AT;
  if (crashAt) env.MINI_AGENT_CRASH_AT = crashAt;
  const r = spawnSync(process.execPath, [...driverArgs(DRIVER), stateDir, ...args], { env, encoding: "utf8", timeout: 180_000 });
  const line = r.stdout.trim().split("\n").filter(Boolean).pop();
  return { signal: r.signal, view: line ? JSON.parse(line) : null };
}

function viewOf(o: Outcome): RunView {
  if (!o.view || ("error" in o.view && o.view.error)) throw new Error(`driver failed: ${JSON.stringify(o.view)} signal=${o.signal}`);
  return o.view as RunView;
}

/** What the ledger holds, read by the test itself (a separate connection, as another process would). */
function ledgerFacts(stateDir: string, runId: string) {
  const db = new Database(path.join(stateDir, "ledger.sqlite"), { readonly: true });
  try {
    const events = db.prepare("SELECT seq, type, action_id FROM events WHERE run_id = ? ORDER BY seq").all(runId) as Array<{
      seq: number;
      type: string;
      action_id: string | null;
    }>;
    const actions = db
      .prepare("SELECT action_id, path, status, intent IS NOT NULL AS has_intent, receipt FROM actions WHERE run_id = ? ORDER BY rowid")
      .all(runId) as Array<{
      action_id: string;
      path: string;
      status: string;
      has_intent: number;
      receipt: string | null;
    }>;
    return { events, actions };
  } finally {
    db.close();
  }
}

/** Per action: how many intents, writes and receipts the trace holds. */
function perAction(events: Array<{ type: string; action_id: string | null }>): Record<string, string> {
  const out: Record<string, string[]> = {};
  for (const e of events) if (e.action_id && e.type.startsWith("action_")) (out[e.action_id] ??= []).push(e.type);
  return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, v.join(",")]));
}

const ONE_WRITE = "action_intent,action_written,action_receipt";

describe("three-state recovery across real processes (SIGKILL at named crash points)", () => {
  let root: string;
  const runIds: string[] = [];
  let n = 0;

  beforeAll(async () => {
    root = tempDir("crash");
  });
  afterAll(async () => {
    expect(await leftovers(runIds)).toEqual([]);
    fs.rmSync(root, { recursive: true, force: true });
  });

  async function fresh() {
    const stateDir = path.join(root, `state-${++n}`);
    await containerExecutor(stateDir); // builds (cached) and pins the image in this state dir
    const workspace = path.join(root, `ws-${n}`);
    const first = viewOf(drive(stateDir, ["create", workspace]));
    runIds.push(first.run_id);
    expect(first.status).toBe("awaiting_approval");
    return { stateDir, workspace, runId: first.run_id, first: first.pending_action! };
  }

  it("killed after the intent: resume finds the file at its before-version, re-checks the approval and writes exactly once", async () => {
    const { stateDir, workspace, runId, first } = await fresh();
    const killed = drive(stateDir, ["approve", runId, first.action_id], "after_intent");
    expect(killed.signal).toBe("SIGKILL");
    expect(fs.existsSync(path.join(workspace, first.path))).toBe(false);
    expect(ledgerFacts(stateDir, runId).actions[0]).toMatchObject({ status: "intent", has_intent: 1, receipt: null });

    const resumed = viewOf(drive(stateDir, ["resume", runId]));
    expect(resumed.status).toBe("awaiting_approval");
    expect(resumed.pending_action?.path).toBe("src/linkcheck.js");
    expect(fs.existsSync(path.join(workspace, first.path))).toBe(true);

    const done = viewOf(drive(stateDir, ["approve", runId, resumed.pending_action!.action_id]));
    expect(done.status, done.reason ?? "").toBe("completed");
    expect(done.counters.writes).toBe(2);
    const facts = ledgerFacts(stateDir, runId);
    expect(Object.values(perAction(facts.events))).toEqual([ONE_WRITE, ONE_WRITE]);
    expect(facts.actions.map((a) => [a.status, JSON.parse(a.receipt!).source])).toEqual([
      ["receipted", "write"],
      ["receipted", "write"],
    ]);
    expect(facts.events.map((e) => e.seq)).toEqual(facts.events.map((_, i) => i + 1));
  });

  it("killed after the write, before the receipt: resume records only the missing receipt and never writes again", async () => {
    const { stateDir, workspace, runId, first } = await fresh();
    const second = viewOf(drive(stateDir, ["approve", runId, first.action_id]));
    const src = path.join(workspace, "src/linkcheck.js");
    const killed = drive(stateDir, ["approve", runId, second.pending_action!.action_id], "after_write_before_receipt");
    expect(killed.signal).toBe("SIGKILL");
    const written = fs.statSync(src);
    expect(fs.readFileSync(src, "utf8")).toContain("path.dirname(docAbs)");
    expect(ledgerFacts(stateDir, runId).actions[1]).toMatchObject({ status: "intent", receipt: null });

    const done = viewOf(drive(stateDir, ["resume", runId]));
    expect(done.status, done.reason ?? "").toBe("completed");
    // the atomic write renames a new file into place: a second write would change the inode
    expect(fs.statSync(src).ino).toBe(written.ino);
    expect(fs.statSync(src).mtimeMs).toBe(written.mtimeMs);
    const facts = ledgerFacts(stateDir, runId);
    expect(Object.values(perAction(facts.events))).toEqual([ONE_WRITE, ONE_WRITE]);
    expect(facts.actions.map((a) => JSON.parse(a.receipt!).source)).toEqual(["write", "recovered"]);
    expect(done.counters.writes).toBe(2);
  });

  it("killed while verifying: resume goes back into the Verifier, never to the model", async () => {
    const { stateDir, runId, first } = await fresh();
    const second = viewOf(drive(stateDir, ["approve", runId, first.action_id]));
    const killed = drive(stateDir, ["approve", runId, second.pending_action!.action_id], "during_verifying");
    expect(killed.signal).toBe("SIGKILL");
    const before = ledgerFacts(stateDir, runId).events;
    expect(before.at(-1)?.type).toBe("verification_started");

    const done = viewOf(drive(stateDir, ["resume", runId]));
    expect(done.status, done.reason ?? "").toBe("completed");
    const after = ledgerFacts(stateDir, runId)
      .events.slice(before.length)
      .map((e) => e.type);
    expect(after).toEqual(["run_stopped", "run_resumed", "verification_passed", "run_stopped"]);
    expect(after).not.toContain("model_requested");
    expect(ledgerFacts(stateDir, runId).events.filter((e) => e.type === "verification_started")).toHaveLength(1);
  });

  it("killed after the intent, then the file is changed by someone else: resume stops as uncertain and leaves the workspace untouched", async () => {
    const { stateDir, workspace, runId, first } = await fresh();
    expect(drive(stateDir, ["approve", runId, first.action_id], "after_intent").signal).toBe("SIGKILL");
    const target = path.join(workspace, first.path);
    fs.writeFileSync(target, "// written by someone else\n");

    const out = viewOf(drive(stateDir, ["resume", runId]));
    expect(out.status).toBe("uncertain");
    expect(out.reason).toContain(first.path);
    expect(fs.readFileSync(target, "utf8")).toBe("// written by someone else\n");
    expect(ledgerFacts(stateDir, runId).actions[0]).toMatchObject({ status: "intent", receipt: null });
  });

  it("a copied ledger or a moved workspace is refused on resume (binding_mismatch)", async () => {
    const { stateDir, workspace, runId, first } = await fresh();
    expect(drive(stateDir, ["approve", runId, first.action_id], "after_intent").signal).toBe("SIGKILL");

    const copy = path.join(root, `copied-state-${n}`);
    fs.mkdirSync(copy);
    for (const f of ["ledger.sqlite", "ledger.sqlite-wal"])
      if (fs.existsSync(path.join(stateDir, f))) fs.copyFileSync(path.join(stateDir, f), path.join(copy, f));
    fs.copyFileSync(path.join(stateDir, "sandbox-image.lock.json"), path.join(copy, "sandbox-image.lock.json"));
    expect(drive(copy, ["resume", runId]).view).toMatchObject({ error: { code: "binding_mismatch" } });

    const moved = `${workspace}-moved`;
    fs.renameSync(workspace, moved);
    fs.cpSync(moved, workspace, { recursive: true });
    expect(drive(stateDir, ["resume", runId]).view).toMatchObject({ error: { code: "binding_mismatch" } });
    // nothing was written by either refusal
    expect(fs.existsSync(path.join(workspace, first.path))).toBe(false);
    expect(fs.existsSync(path.join(moved, first.path))).toBe(false);
  });
});
