import fs from "node:fs";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { Ledger } from "./ledger.js";
import { LATEST_SCHEMA } from "./migrations.js";
import { tempLedgers, testRecord, testState } from "./ledger.testkit.js";
import type { RunRecord, RunState } from "./records.js";
import { codeOf } from "../errors.testkit.js";

const ledgers = tempLedgers();
afterEach(() => ledgers.cleanup());
const tmpLedger = () => ledgers.open(() => 42);

const record: RunRecord = testRecord({ replay_path: "/r.json" });
const state: RunState = testState();

describe("ledger", () => {
  it("opens in WAL with synchronous=FULL and records the schema version", () => {
    const { ledger } = tmpLedger();
    expect(ledger.db.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(ledger.db.pragma("synchronous", { simple: true })).toBe(2);
    expect(ledger.db.prepare("SELECT MAX(version) AS v FROM schema_version").get()).toEqual({ v: LATEST_SCHEMA });
    ledger.close();
  });

  it("refuses a ledger written by a newer schema instead of guessing (schema_version_unsupported)", () => {
    const { file, ledger } = tmpLedger();
    ledger.db.prepare("INSERT INTO schema_version (version, applied_at) VALUES (?, 0)").run(LATEST_SCHEMA + 1);
    ledger.close();
    expect(codeOf(() => new Ledger(file))).toBe("schema_version_unsupported");
  });

  it("refuses a record with an unknown schema_version when reading it back, not reinterpreting it", () => {
    const { file, ledger } = tmpLedger();
    ledger.insertRun({ run_id: "run_1", created_at: 1, status: "running", reason: null, record, state });
    ledger.close();
    const raw = new Database(file);
    raw.prepare("UPDATE runs SET state = json_set(state, '$.schema_version', 2)").run();
    raw.close();
    const again = new Ledger(file);
    expect(codeOf(() => again.getRun("run_1"))).toBe("schema_version_unsupported");
    again.close();
  });

  it("gives events a monotonic seq per run and redacts credential-looking fields and values", () => {
    const { ledger } = tmpLedger();
    ledger.insertRun({ run_id: "run_a", created_at: 1, status: "running", reason: null, record, state });
    ledger.insertRun({ run_id: "run_b", created_at: 2, status: "running", reason: null, record, state });
    expect(ledger.appendEvent("run_a", { type: "run_created", payload: { api_key: "sk-abcdefghijklmnopqrstuvwx", prompt_tokens: 5 } }, 1)).toBe(1);
    expect(ledger.appendEvent("run_b", { type: "run_created" }, 1)).toBe(1);
    expect(ledger.appendEvent("run_a", { type: "plan_recorded", payload: { text: "use Bearer abcdefghijklmnopqrstuvwxyz0123 now" } }, 1)).toBe(2);
    const events = ledger.listEvents("run_a");
    expect(events.map((e) => e.seq)).toEqual([1, 2]);
    expect(events[0]!.payload).toEqual({ api_key: "[redacted]", prompt_tokens: 5 });
    expect(events[1]!.payload.text).toBe("use Bearer [redacted] now");
    expect(JSON.stringify(ledger.db.prepare("SELECT payload FROM events").all())).not.toContain("sk-abc");
    ledger.close();
  });

  it("moves several rows together or not at all", () => {
    const { ledger } = tmpLedger();
    ledger.insertRun({ run_id: "run_1", created_at: 1, status: "running", reason: null, record, state });
    expect(() =>
      ledger.tx(() => {
        ledger.setRunStatus("run_1", "awaiting_approval", null);
        ledger.appendEvent("run_1", { type: "approval_requested" }, 1);
        throw new Error("crash in the middle");
      }),
    ).toThrow("crash in the middle");
    expect(ledger.getRun("run_1").status).toBe("running");
    expect(ledger.listEvents("run_1")).toEqual([]);
    ledger.close();
  });

  it("reports an unknown run as run_not_found and knows which run holds a workspace", () => {
    const { ledger } = tmpLedger();
    expect(codeOf(() => ledger.getRun("nope"))).toBe("run_not_found");
    ledger.insertRun({ run_id: "run_1", created_at: 1, status: "awaiting_approval", reason: null, record, state });
    expect(ledger.activeRunFor("/w")).toBe("run_1");
    ledger.setRunStatus("run_1", "completed", null);
    expect(ledger.activeRunFor("/w")).toBeNull();
    ledger.close();
  });
});

describe("ledger redaction of free text", () => {
  it("keeps a provider-echoed key out of run reasons, state and messages (regression: key quoted in a model error reached the ledger)", () => {
    const { file, ledger } = tmpLedger();
    const key = "sk-canary-0123456789abcdefghij";
    ledger.insertRun({ run_id: "run_1", created_at: 1, status: "running", reason: null, record, state });
    ledger.setRunStatus("run_1", "failed", `model_error: context too long for key ${key}`);
    ledger.updateRun("run_1", { state: { ...state, last_plan: `use ${key}` } });
    ledger.appendMessage("run_1", { schema_version: 1, role: "assistant", decision: { kind: "plan", text: `the key is ${key}` } });
    expect(ledger.getRun("run_1").reason).toBe("model_error: context too long for key [redacted]");
    ledger.close();
    expect(fs.readFileSync(file).includes(key)).toBe(false);
    const wal = `${file}-wal`;
    if (fs.existsSync(wal)) expect(fs.readFileSync(wal).includes(key)).toBe(false);
  });
});

describe("append-only trace", () => {
  it("refuses to update or delete an event at the database level", () => {
    const { ledger } = tmpLedger();
    ledger.insertRun({ run_id: "run_1", created_at: 1, status: "running", reason: null, record, state });
    ledger.appendEvent("run_1", { type: "run_created" }, 1);
    expect(() => ledger.db.prepare("UPDATE events SET type = 'run_stopped'").run()).toThrow(/append-only/);
    expect(() => ledger.db.prepare("DELETE FROM events").run()).toThrow(/append-only/);
    expect(ledger.listEvents("run_1").map((e) => e.type)).toEqual(["run_created"]);
    ledger.close();
  });

  it("migrates a version-1 ledger forward without losing its rows", () => {
    const { file, ledger } = tmpLedger();
    ledger.insertRun({ run_id: "run_1", created_at: 1, status: "running", reason: null, record, state });
    ledger.db.exec("DROP TRIGGER events_append_only_update; DROP TRIGGER events_append_only_delete; DELETE FROM schema_version WHERE version = 2");
    ledger.close();
    const again = new Ledger(file);
    expect(again.getRun("run_1").status).toBe("running");
    expect(again.db.prepare("SELECT MAX(version) AS v FROM schema_version").get()).toEqual({ v: LATEST_SCHEMA });
    again.close();
  });
});
