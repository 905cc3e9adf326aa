import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunView } from "../../daemon/src/runtime/service.js";
import { containerExecutor, leftovers, tempDir } from "../runtime/harness.js";
import { driverArgs } from "../kit/driver.js";

/**
 * The Agents SDK orchestrator across real processes: each process is
 * SIGKILLed while the run waits at an approval (its RunState saved in the
 * state dir), and the next process, a new RunService on the same state dir,
 * approves and resumes that RunState. The ledger must hold exactly one write
 * per approved action however the processes end.
 */
process.env.TESTCONTAINERS_RYUK_DISABLED = "true";
const DRIVER = path.join(path.dirname(fileURLToPath(import.meta.url)), "agents-sdk-driver.ts");

interface Step {
  view: RunView;
  log: string;
  exit: number | string;
}

/**
 * One driver process. held: it stays alive at the pause, like a daemon, and is SIGKILLed here once it printed
 * the run's view; otherwise it runs to its end (or to its own crash point).
 */
async function step(stateDir: string, args: string[], opts: { held?: boolean; crashAt?: string } = {}): Promise<Step> {
  const logFile = path.join(stateDir, `driver-${Date.now()}-${Math.random().toString(16).slice(2)}.log`);
  const env: NodeJS.ProcessEnv = { ...process.env, MINI_AGENT_DRIVER_LOG: logFile, MINI_AGENT_DRIVER_HOLD: opts.held ? "1" : "0" };
  delete env.MINI_AGENT_CRASH_AT;
  if (opts.crashAt) env.MINI_AGENT_CRASH_AT = opts.crashAt;
  const child = spawn(process.execPath, [...driverArgs(DRIVER), stateDir, ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | string>((resolve) => child.on("exit", (code, signal) => resolve(code ?? signal ?? -1)));
  const line = await new Promise<string | null>((resolve) => {
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes("\n")) resolve(out.split("\n")[0]!);
    });
    void exited.then(() => resolve(out.split("\n")[0] || null));
  });
  if (opts.held) child.kill("SIGKILL");
  const exit = await exited;
  const log = fs.existsSync(logFile) ? fs.readFileSync(logFile, "utf8") : "";
  const parsed = line ? (JSON.parse(line) as RunView & { error?: unknown }) : null;
  if (!opts.crashAt && (!parsed || parsed.error)) throw new Error(`driver failed: ${line} exit=${exit}\n${err}`);
  return { view: parsed as RunView, log, exit };
}

function ledger(stateDir: string, runId: string) {
  const db = new Database(path.join(stateDir, "ledger.sqlite"), { readonly: true });
  try {
    const events = db.prepare("SELECT type, action_id, payload FROM events WHERE run_id = ? ORDER BY seq").all(runId) as Array<{
      type: string;
      action_id: string | null;
      payload: string;
    }>;
    const actions = db.prepare("SELECT action_id, call_id, status FROM actions WHERE run_id = ? ORDER BY rowid").all(runId) as Array<{
      action_id: string;
      call_id: string;
      status: string;
    }>;
    const run = db.prepare("SELECT status, state FROM runs WHERE run_id = ?").get(runId) as { status: string; state: string };
    return { events, actions, run: { status: run.status, state: JSON.parse(run.state) as { counters: { writes: number } } } };
  } finally {
    db.close();
  }
}

const count = (events: Array<{ type: string }>, type: string) => events.filter((e) => e.type === type).length;
const resumedFromSavedState = (log: string) => log.split("\n").some((l) => l.includes('"resumed":"saved_run_state"'));

function savedStateFile(stateDir: string, runId: string): string {
  return path.join(stateDir, "orchestrators", "agents-sdk", `${runId}.json`);
}

describe("agents-sdk orchestrator: SIGKILL at each approval, resumed in a new process", () => {
  let root: string;
  const runIds: string[] = [];
  let n = 0;

  beforeAll(() => {
    root = tempDir("agents-sdk-kill");
  });
  afterAll(async () => {
    expect(await leftovers(runIds)).toEqual([]);
    fs.rmSync(root, { recursive: true, force: true });
  });

  async function fresh() {
    const stateDir = path.join(root, `state-${++n}`);
    await containerExecutor(stateDir); // pins the image in this state dir
    return { stateDir, workspace: path.join(root, `ws-${n}`) };
  }

  it("process A pauses at approval 1 and is killed; B approves, resumes the saved RunState, pauses at 2 and is killed; C approves: completed, exactly 2 writes", async () => {
    const { stateDir, workspace } = await fresh();

    const a = await step(stateDir, ["create", workspace], { held: true });
    expect(a.exit).toBe("SIGKILL");
    expect(a.view.status).toBe("awaiting_approval");
    const runId = a.view.run_id;
    runIds.push(runId);
    const first = a.view.pending_action!.action_id;
    // the SDK's RunState, saved at the pause, names the very call the ledger waits on
    const file = savedStateFile(stateDir, runId);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    const saved = JSON.parse(fs.readFileSync(file, "utf8")) as { run_id: string; state: string };
    expect(saved.run_id).toBe(runId);
    const firstCall = ledger(stateDir, runId).actions.find((x) => x.action_id === first)!.call_id;
    expect(saved.state).toContain(firstCall);

    const b = await step(stateDir, ["approve", runId, first], { held: true });
    expect(b.exit).toBe("SIGKILL");
    expect(resumedFromSavedState(b.log)).toBe(true);
    expect(b.view.status).toBe("awaiting_approval");
    const second = b.view.pending_action!.action_id;
    expect(second).not.toBe(first);
    expect(count(ledger(stateDir, runId).events, "action_written")).toBe(1);

    const c = await step(stateDir, ["approve", runId, second]);
    expect(resumedFromSavedState(c.log)).toBe(true);
    expect({ status: c.view.status, reason: c.view.reason }).toEqual({ status: "completed", reason: "verified by the host" });

    const facts = ledger(stateDir, runId);
    expect(count(facts.events, "action_written")).toBe(2);
    expect(count(facts.events, "action_receipt")).toBe(2);
    expect(count(facts.events, "approval_recorded")).toBe(2);
    expect(facts.actions.map((x) => x.status)).toEqual(["receipted", "receipted"]);
    expect(facts.run.state.counters.writes).toBe(2);
    // nothing of the pause is left once the run is done
    expect(fs.existsSync(file)).toBe(false);
  });

  it("a process killed between the approved write and its receipt (RunState still at the pause): the next one records only the receipt, never a second write", async () => {
    const { stateDir, workspace } = await fresh();
    const a = await step(stateDir, ["create", workspace], { held: true });
    const runId = a.view.run_id;
    runIds.push(runId);
    const first = a.view.pending_action!.action_id;

    // B approves; the approved tool's execute writes the file, and the process dies before the receipt
    const b = await step(stateDir, ["approve", runId, first], { crashAt: "after_write_before_receipt" });
    expect(b.exit).toBe("SIGKILL");
    expect(count(ledger(stateDir, runId).events, "action_written")).toBe(0);
    expect(fs.existsSync(savedStateFile(stateDir, runId))).toBe(true);

    // C: startup marks the run interrupted; resume finds the file at its "after" version -> receipt only
    const c = await step(stateDir, ["resume", runId]);
    expect(resumedFromSavedState(c.log)).toBe(true);
    expect(c.view.status).toBe("awaiting_approval");
    const second = c.view.pending_action!.action_id;
    const d = await step(stateDir, ["approve", runId, second]);
    expect(d.view.status).toBe("completed");

    const facts = ledger(stateDir, runId);
    const written = facts.events.filter((e) => e.type === "action_written");
    expect(written.map((e) => [e.action_id, (JSON.parse(e.payload) as { source: string }).source])).toEqual([
      [first, "recovered"],
      [second, "write"],
    ]);
    expect(count(facts.events, "action_intent")).toBe(2);
    expect(facts.run.state.counters.writes).toBe(2);
  });
});
