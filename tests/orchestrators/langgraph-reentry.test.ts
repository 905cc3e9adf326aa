import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkpointFile } from "../../daemon/src/orchestrators/langgraph/index.js";
import type { RunView } from "../../daemon/src/runtime/service.js";
import { containerExecutor, leftovers, tempDir } from "../runtime/harness.js";
import { driverArgs } from "../kit/driver.js";

process.env.TESTCONTAINERS_RYUK_DISABLED = "true";
const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), "langgraph-child.ts");
const ONE_WRITE = "action_intent,action_written,action_receipt";

interface Lived {
  view: RunView | null;
  signal: NodeJS.Signals | null;
  /** the child's JSON log lines */
  logs: Array<Record<string, unknown>>;
}

/**
 * Runs one child process. When it prints a run view that awaits approval it is
 * SIGKILLed there, as a daemon killed at the pause; otherwise it ends by itself
 * (or is killed by its own crash point).
 */
function live(stateDir: string, args: string[], crashAt?: string): Promise<Lived> {
  const env = { ...process.env };
  delete env.MINI_AGENT_CRASH_AT;
  if (crashAt) env.MINI_AGENT_CRASH_AT = crashAt;
  const child = spawn(process.execPath, [...driverArgs(CHILD), stateDir, ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  let view: RunView | null = null;
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  child.stdout.on("data", (d: Buffer) => {
    out += d.toString();
    const line = out.split("\n").find((l) => l.startsWith("{"));
    if (!line || view) return;
    const parsed = JSON.parse(line) as RunView | { error: unknown };
    if ("error" in parsed) return;
    view = parsed;
    if (view.status === "awaiting_approval") child.kill("SIGKILL");
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 240_000);
  return new Promise((resolve) =>
    child.on("exit", (_code, signal) => {
      clearTimeout(timer);
      const logs = err
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      if (!view && !signal) throw new Error(`child printed no view:\n${out}\n${err}`);
      resolve({ view, signal, logs });
    }),
  );
}

function drives(l: Lived): unknown[] {
  return l.logs.filter((r) => r.msg === "langgraph drive").map((r) => r.start);
}

function entries(l: Lived): unknown[] {
  return l.logs.filter((r) => r.msg === "langgraph drive").map((r) => r.entry ?? r.decision);
}

/** What the ledger holds, read by the test itself (a separate connection, as another process would). */
function ledgerFacts(stateDir: string, runId: string) {
  const db = new Database(path.join(stateDir, "ledger.sqlite"), { readonly: true });
  try {
    const events = db.prepare("SELECT type, action_id FROM events WHERE run_id = ? ORDER BY seq").all(runId) as Array<{
      type: string;
      action_id: string | null;
    }>;
    const actions = db.prepare("SELECT action_id, status, receipt FROM actions WHERE run_id = ? ORDER BY rowid").all(runId) as Array<{
      action_id: string;
      status: string;
      receipt: string | null;
    }>;
    const perAction: Record<string, string[]> = {};
    for (const e of events) if (e.action_id && e.type.startsWith("action_")) (perAction[e.action_id] ??= []).push(e.type);
    return {
      types: events.map((e) => e.type),
      writes: Object.values(perAction).map((v) => v.join(",")),
      receipts: actions.map((a) => (a.receipt ? (JSON.parse(a.receipt) as { source: string }).source : null)),
    };
  } finally {
    db.close();
  }
}

function pausedCheckpoints(stateDir: string, runId: string): number {
  const db = new Database(checkpointFile(stateDir), { readonly: true });
  try {
    return (db.prepare("SELECT COUNT(*) AS n FROM checkpoints WHERE thread_id = ?").get(runId) as { n: number }).n;
  } finally {
    db.close();
  }
}

describe("langgraph re-entry across real processes: a SIGKILL between interrupt() and its resume never writes twice", () => {
  let root: string;
  const runIds: string[] = [];
  let n = 0;

  beforeAll(() => {
    root = tempDir("lg-reentry");
  });
  afterAll(async () => {
    expect(await leftovers(runIds)).toEqual([]);
    fs.rmSync(root, { recursive: true, force: true });
  });

  async function firstPause() {
    const stateDir = path.join(root, `state-${++n}`);
    await containerExecutor(stateDir);
    const workspace = path.join(root, `ws-${n}`);
    const a = await live(stateDir, ["create", workspace]);
    expect(a.signal).toBe("SIGKILL");
    const view = a.view!;
    runIds.push(view.run_id);
    expect(view.status).toBe("awaiting_approval");
    expect(view.orchestrator).toBe("langgraph");
    expect(drives(a)).toEqual(["fresh"]);
    // the pause is a checkpoint on disk, left by a process that no longer exists
    expect(pausedCheckpoints(stateDir, view.run_id)).toBeGreaterThan(0);
    return { stateDir, workspace, runId: view.run_id, first: view.pending_action! };
  }

  it("killed at each approval pause: each next process resumes the interrupt from the checkpoint and the run completes with exactly 2 writes", async () => {
    const { stateDir, workspace, runId, first } = await firstPause();

    const b = await live(stateDir, ["approve", runId, first.action_id]);
    expect(b.signal).toBe("SIGKILL");
    expect(b.view?.status).toBe("awaiting_approval");
    expect(drives(b)).toEqual(["resume"]);
    expect(fs.readFileSync(path.join(workspace, first.path), "utf8").length).toBeGreaterThan(0);
    expect(ledgerFacts(stateDir, runId).writes).toEqual([ONE_WRITE]);

    const c = await live(stateDir, ["approve", runId, b.view!.pending_action!.action_id]);
    expect(c.view?.status, c.view?.reason ?? "").toBe("completed");
    expect(drives(c)).toEqual(["resume"]);
    expect(c.view?.counters.writes).toBe(2);
    const facts = ledgerFacts(stateDir, runId);
    expect(facts.writes).toEqual([ONE_WRITE, ONE_WRITE]);
    expect(facts.receipts).toEqual(["write", "write"]);
    expect(facts.types.filter((t) => t === "action_written")).toHaveLength(2);
    expect(facts.types.filter((t) => t === "approval_requested")).toHaveLength(2);
    expect(fs.readFileSync(path.join(workspace, "src/linkcheck.js"), "utf8")).toContain("path.dirname(docAbs)");
    expect(pausedCheckpoints(stateDir, runId)).toBe(0);
  });

  it("killed after the write, before its receipt and the next checkpoint: the resumed graph re-enters execution and writes nothing again (receipt recovered)", async () => {
    const { stateDir, workspace, runId, first } = await firstPause();
    const b = await live(stateDir, ["approve", runId, first.action_id]);
    const second = b.view!.pending_action!;
    const src = path.join(workspace, "src/linkcheck.js");

    const killed = await live(stateDir, ["approve", runId, second.action_id], "after_write_before_receipt");
    expect(killed.signal).toBe("SIGKILL");
    expect(killed.view).toBeNull();
    expect(drives(killed)).toEqual(["resume"]);
    const written = fs.statSync(src);
    expect(fs.readFileSync(src, "utf8")).toContain("path.dirname(docAbs)");
    expect(ledgerFacts(stateDir, runId).receipts).toEqual(["write", null]);

    const d = await live(stateDir, ["resume", runId]);
    expect(d.view?.status, d.view?.reason ?? "").toBe("completed");
    // the atomic write renames a new file into place: a second write would change the inode
    expect(fs.statSync(src).ino).toBe(written.ino);
    expect(fs.statSync(src).mtimeMs).toBe(written.mtimeMs);
    const facts = ledgerFacts(stateDir, runId);
    expect(facts.writes).toEqual([ONE_WRITE, ONE_WRITE]);
    expect(facts.receipts).toEqual(["write", "recovered"]);
    expect(d.view?.counters.writes).toBe(2);
  });

  it("killed while verifying: the resumed drive goes straight to the Verifier node, never back to the model", async () => {
    const { stateDir, runId, first } = await firstPause();
    const b = await live(stateDir, ["approve", runId, first.action_id]);
    const killed = await live(stateDir, ["approve", runId, b.view!.pending_action!.action_id], "during_verifying");
    expect(killed.signal).toBe("SIGKILL");
    const before = ledgerFacts(stateDir, runId).types;
    expect(before.at(-1)).toBe("verification_started");

    const d = await live(stateDir, ["resume", runId]);
    expect(d.view?.status, d.view?.reason ?? "").toBe("completed");
    expect(entries(d)).toEqual(["verify"]);
    const after = ledgerFacts(stateDir, runId).types.slice(before.length);
    expect(after).toEqual(["run_stopped", "run_resumed", "verification_passed", "run_stopped"]);
    expect(ledgerFacts(stateDir, runId).writes).toEqual([ONE_WRITE, ONE_WRITE]);
  });
});
