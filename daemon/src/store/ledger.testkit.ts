/**
 * Test kit: a real SQLite ledger in a temp dir with one run in it, so a test
 * file states only what its case is about (the status, a state field, the
 * history) instead of repeating the whole task spec and run record.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { TaskSpec } from "../contracts/task-spec.js";
import { initialState } from "../runtime/create-run/index.js";
import { Ledger } from "./ledger.js";
import type { RunRecord, RunState } from "./records.js";

/** The smallest valid task: one writable glob, one preset. */
export const TEST_TASK: TaskSpec = TaskSpec.parse({
  schema_version: 1,
  name: "t",
  task: "do it",
  writable: ["src/**"],
  test_presets: { unit: { command: ["node", "--test"] } },
  verify_preset: "unit",
});

/** A run record for TEST_TASK (replay model, container backend); `over` replaces fields. */
export function testRecord(over: Partial<RunRecord> = {}): RunRecord {
  const task = over.task ?? TEST_TASK;
  return {
    schema_version: 1,
    task,
    workspace: "/w",
    control_dir: "/c",
    fixture_dir: null,
    model: "replay",
    backend: "container",
    replay_path: null,
    replay_trusted: false,
    budgets: task.budgets,
    ...over,
  };
}

/** The state of a run that has done nothing yet; `over` replaces fields. */
export function testState(over: Partial<RunState> = {}): RunState {
  return { ...initialState(), ...over };
}

/**
 * Temp ledgers for one test file: `open()` makes a new ledger file (and dir)
 * each call; `cleanup()` (afterEach/afterAll) removes them all.
 */
export function tempLedgers(prefix = "mini-agent-ledger-"): {
  open(clock?: () => number): { ledger: Ledger; file: string };
  cleanup(): void;
} {
  const dirs: string[] = [];
  return {
    open(clock) {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
      dirs.push(dir);
      const file = path.join(dir, "ledger.sqlite");
      return { ledger: new Ledger(file, clock), file };
    },
    cleanup() {
      for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
    },
  };
}

/** Inserts run `runId` (default run_1) with `testRecord`/`testState` plus overrides. */
export function insertTestRun(
  ledger: Ledger,
  o: {
    runId?: string;
    status?: Parameters<Ledger["insertRun"]>[0]["status"];
    reason?: string | null;
    record?: Partial<RunRecord>;
    state?: Partial<RunState>;
  } = {},
): void {
  ledger.insertRun({
    run_id: o.runId ?? "run_1",
    created_at: 1,
    status: o.status ?? "running",
    reason: o.reason ?? null,
    record: testRecord(o.record),
    state: testState(o.state),
  });
}
