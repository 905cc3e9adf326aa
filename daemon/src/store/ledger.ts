import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { RunStatus, TERMINAL_STATUSES } from "../contracts/run.js";
import type { EventType } from "../contracts/run.js";
import { MiniAgentError } from "../errors.js";
import { migrate } from "./migrations.js";
import { redactDeep, redactText, type KnownSecrets } from "../redact/index.js";
import {
  ActionRecord,
  ActionStatus,
  ApprovalRecord,
  BindingRecord,
  EventPayload,
  IntentRecord,
  MessageRecord,
  ReceiptRecord,
  RunRecord,
  RunState,
  readRecord,
  writeRecord,
} from "./records.js";

export interface RunRow {
  run_id: string;
  created_at: number;
  status: RunStatus;
  reason: string | null;
  replay_cursor: number;
  record: RunRecord;
  state: RunState;
}

export interface ActionRow {
  record: ActionRecord;
  status: ActionStatus;
  intent: IntentRecord | null;
  receipt: ReceiptRecord | null;
}

export interface EventRow {
  seq: number;
  type: EventType;
  call_id: string | null;
  action_id: string | null;
  at: number;
  payload: Record<string, unknown>;
}

type RawRun = { run_id: string; created_at: number; status: string; reason: string | null; replay_cursor: number; record: string; state: string };
type RawAction = { record: string; status: string; intent: string | null; receipt: string | null };
/** runs whose parsed rows are kept: more than a daemon drives at once */
const PARSED_RUNS_MAX = 64;
const NON_TERMINAL = RunStatus.options.filter((s) => !TERMINAL_STATUSES.includes(s));

/**
 * The SQLite ledger: typed repository functions over better-sqlite3. WAL with
 * synchronous=FULL so a committed row survives a SIGKILL or power loss: intents
 * and receipts are the facts recovery stands on.
 */
export class Ledger {
  readonly db: Database.Database;
  /** the live credentials the daemon holds, scrubbed from every row along with the secret shapes (redact/) */
  private readonly known: () => KnownSecrets;
  /** one list per open tx() level: what afterCommit() queued in it */
  private readonly commitFrames: Array<Array<() => void>> = [];
  /** prepared once per SQL text: compiling the same statement for every read and write was a tenth of the daemon's CPU in an eval run */
  private readonly statements = new Map<string, Database.Statement>();
  /** the last parsed record and state of recently read runs, by their exact JSON text (see toRun) */
  private readonly parsedRuns = new Map<string, { record: { text: string; value: RunRecord }; state: { text: string; value: RunState } }>();

  constructor(file: string, now: () => number = Date.now, knownSecrets: () => KnownSecrets = () => []) {
    this.known = knownSecrets;
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    this.db = new Database(file);
    this.db.pragma("journal_mode = WAL");
    this.db.pragma("synchronous = FULL");
    this.db.pragma("foreign_keys = ON");
    this.db.pragma("busy_timeout = 5000");
    migrate(this.db, now);
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  private sql(text: string): Database.Statement {
    let stmt = this.statements.get(text);
    if (!stmt) {
      stmt = this.db.prepare(text);
      this.statements.set(text, stmt);
    }
    return stmt;
  }

  /** Several rows that must move together. Nested calls join the outer transaction. */
  tx<T>(fn: () => T): T {
    // callbacks registered inside run after the OUTERMOST commit; a rolled-back (inner) tx drops its own
    const frame: Array<() => void> = [];
    this.commitFrames.push(frame);
    let out: T;
    try {
      out = this.db.transaction(fn)();
    } finally {
      this.commitFrames.pop();
    }
    const parent = this.commitFrames[this.commitFrames.length - 1];
    if (parent) parent.push(...frame);
    else for (const cb of frame) cb();
    return out;
  }

  /**
   * Runs `cb` once what was written so far is committed: at once outside tx(),
   * after the outermost commit inside it, never when it rolls back. `cb` must
   * not throw (it runs after the commit, where nothing can be undone).
   */
  afterCommit(cb: () => void): void {
    const frame = this.commitFrames[this.commitFrames.length - 1];
    if (frame) frame.push(cb);
    else cb();
  }

  /** The live credentials the rows are scrubbed of, for a sink that must redact exactly as the ledger does. */
  knownSecrets(): KnownSecrets {
    return this.known();
  }

  // runs ---------------------------------------------------------------
  insertRun(row: Omit<RunRow, "replay_cursor">): void {
    this.sql("INSERT INTO runs (run_id, created_at, status, reason, workspace, replay_cursor, record, state) VALUES (?, ?, ?, ?, ?, 0, ?, ?)").run(
      row.run_id,
      row.created_at,
      row.status,
      row.reason,
      row.record.workspace,
      writeRecord(row.record),
      writeRecord(row.state),
    );
  }

  findRun(runId: string): RunRow | undefined {
    const raw = this.sql("SELECT * FROM runs WHERE run_id = ?").get(runId) as RawRun | undefined;
    return raw && this.toRun(raw);
  }

  getRun(runId: string): RunRow {
    const run = this.findRun(runId);
    if (!run) throw new MiniAgentError("run_not_found", `no run ${runId}`, { details: { run_id: runId } });
    return run;
  }

  listRuns(): RunRow[] {
    return (this.sql("SELECT * FROM runs ORDER BY created_at, run_id").all() as RawRun[]).map((r) => this.toRun(r));
  }

  runsWithStatus(statuses: readonly RunStatus[]): RunRow[] {
    const marks = statuses.map(() => "?").join(",");
    return (this.sql(`SELECT * FROM runs WHERE status IN (${marks}) ORDER BY created_at`).all(...statuses) as RawRun[]).map((r) => this.toRun(r));
  }

  /** A run that still holds this workspace (anything not terminal). */
  activeRunFor(workspace: string): string | null {
    const marks = NON_TERMINAL.map(() => "?").join(",");
    const row = this.sql(`SELECT run_id FROM runs WHERE workspace = ? AND status IN (${marks}) LIMIT 1`).get(workspace, ...NON_TERMINAL) as
      | { run_id: string }
      | undefined;
    return row?.run_id ?? null;
  }

  /** Everything of a run but its status (that is setRunStatus, called by runtime/lifecycle.ts only). */
  updateRun(runId: string, patch: { state?: RunState; record?: RunRecord; replay_cursor?: number }): void {
    const sets: string[] = [];
    const vals: unknown[] = [];
    if (patch.state !== undefined) sets.push("state = ?"), vals.push(writeRecord(redactDeep(patch.state, this.known()) as RunState));
    if (patch.record !== undefined) sets.push("record = ?"), vals.push(writeRecord(patch.record));
    if (patch.replay_cursor !== undefined) sets.push("replay_cursor = ?"), vals.push(patch.replay_cursor);
    if (sets.length === 0) return;
    const info = this.sql(`UPDATE runs SET ${sets.join(", ")} WHERE run_id = ?`).run(...vals, runId);
    if (info.changes !== 1) throw new MiniAgentError("run_not_found", `no run ${runId}`);
  }

  /**
   * The run's status and why. Only runtime/lifecycle.ts calls this: it checks
   * the move against RUN_TRANSITIONS first (a test holds every other file to it).
   */
  setRunStatus(runId: string, status: RunStatus, reason: string | null): void {
    const info = this.sql("UPDATE runs SET status = ?, reason = ? WHERE run_id = ?").run(
      status,
      reason === null ? null : redactText(reason, this.known()),
      runId,
    );
    if (info.changes !== 1) throw new MiniAgentError("run_not_found", `no run ${runId}`);
  }

  private toRun(raw: RawRun): RunRow {
    const status = RunStatus.safeParse(raw.status);
    if (!status.success) throw new MiniAgentError("internal", `ledger run ${raw.run_id} has unknown status ${raw.status}`);
    return {
      run_id: raw.run_id,
      created_at: raw.created_at,
      status: status.data,
      reason: raw.reason,
      replay_cursor: raw.replay_cursor,
      ...this.parsedRun(raw),
    };
  }

  /**
   * A run's record and state, validated once per text: the runtime and every
   * long-poll read the same run many times between two writes, and the schema
   * check of the same JSON was the daemon's largest cost in an eval run. Each
   * is kept apart: the state changes at every step, the (larger) record almost
   * never. Keyed by the exact text read from the row, so a written change is
   * always parsed and checked again; each caller gets its own copy to change.
   */
  private parsedRun(raw: RawRun): Pick<RunRow, "record" | "state"> {
    const hit = this.parsedRuns.get(raw.run_id);
    const record = hit?.record.text === raw.record ? hit.record.value : readRecord(RunRecord, raw.record, "run");
    const state = hit?.state.text === raw.state ? hit.state.value : readRecord(RunState, raw.state, "run state");
    // Map order is use order: the oldest entry goes first
    this.parsedRuns.delete(raw.run_id);
    this.parsedRuns.set(raw.run_id, { record: { text: raw.record, value: record }, state: { text: raw.state, value: state } });
    if (this.parsedRuns.size > PARSED_RUNS_MAX) this.parsedRuns.delete(this.parsedRuns.keys().next().value as string);
    return structuredClone({ record, state });
  }

  // bindings -----------------------------------------------------------
  insertBinding(b: BindingRecord): void {
    this.sql("INSERT INTO bindings (run_id, workspace, control_dir, binding_id, record) VALUES (?, ?, ?, ?, ?)").run(
      b.run_id,
      b.workspace,
      b.control_dir,
      b.binding_id,
      writeRecord(b),
    );
  }

  getBinding(runId: string): BindingRecord | undefined {
    const row = this.sql("SELECT record FROM bindings WHERE run_id = ?").get(runId) as { record: string } | undefined;
    return row && readRecord(BindingRecord, row.record, "binding");
  }

  // messages -----------------------------------------------------------
  appendMessage(runId: string, m: MessageRecord): number {
    const next = (this.sql("SELECT COALESCE(MAX(idx), -1) + 1 AS n FROM messages WHERE run_id = ?").get(runId) as { n: number }).n;
    const callId = m.role === "tool" ? m.result.call_id : m.decision.kind === "tool" ? m.decision.call.call_id : null;
    // a model or provider may quote a key back, a tool may read one: secret-shaped text never reaches the ledger
    const safe = redactDeep(m, this.known()) as MessageRecord;
    this.sql("INSERT INTO messages (run_id, idx, role, call_id, record) VALUES (?, ?, ?, ?, ?)").run(runId, next, m.role, callId, writeRecord(safe));
    return next;
  }

  listMessages(runId: string): MessageRecord[] {
    return (this.sql("SELECT record FROM messages WHERE run_id = ? ORDER BY idx").all(runId) as Array<{ record: string }>).map((r) =>
      readRecord(MessageRecord, r.record, "message"),
    );
  }

  // actions ------------------------------------------------------------
  insertAction(a: ActionRecord): void {
    this.sql(
      "INSERT INTO actions (run_id, action_id, call_id, path, status, before_hash, after_hash, manifest_digest, record) VALUES (?, ?, ?, ?, 'pending', ?, ?, ?, ?)",
    ).run(a.run_id, a.action_id, a.call_id, a.path, a.before_hash, a.after_hash, a.manifest_digest, writeRecord(a));
  }

  findAction(runId: string, actionId: string): ActionRow | undefined {
    const raw = this.sql("SELECT record, status, intent, receipt FROM actions WHERE run_id = ? AND action_id = ?").get(runId, actionId) as
      | RawAction
      | undefined;
    return raw && this.toAction(raw);
  }

  listActions(runId: string): ActionRow[] {
    return (this.sql("SELECT record, status, intent, receipt FROM actions WHERE run_id = ? ORDER BY rowid").all(runId) as RawAction[]).map((r) =>
      this.toAction(r),
    );
  }

  setActionStatus(runId: string, actionId: string, status: ActionStatus, extra: { intent?: IntentRecord; receipt?: ReceiptRecord } = {}): void {
    const info = this.sql("UPDATE actions SET status = ?, intent = COALESCE(?, intent), receipt = COALESCE(?, receipt) WHERE run_id = ? AND action_id = ?").run(
      status,
      extra.intent ? writeRecord(extra.intent) : null,
      extra.receipt ? writeRecord(extra.receipt) : null,
      runId,
      actionId,
    );
    if (info.changes !== 1) throw new MiniAgentError("approval_unknown", `no action ${actionId} in run ${runId}`);
  }

  private toAction(raw: RawAction): ActionRow {
    const status = ActionStatus.safeParse(raw.status);
    if (!status.success) throw new MiniAgentError("internal", `ledger action has unknown status ${raw.status}`);
    return {
      record: readRecord(ActionRecord, raw.record, "action"),
      status: status.data,
      intent: raw.intent === null ? null : readRecord(IntentRecord, raw.intent, "intent"),
      receipt: raw.receipt === null ? null : readRecord(ReceiptRecord, raw.receipt, "receipt"),
    };
  }

  // approvals ----------------------------------------------------------
  insertApproval(a: ApprovalRecord): void {
    this.sql("INSERT INTO approvals (run_id, action_id, decision, reason, record) VALUES (?, ?, ?, ?, ?)").run(
      a.binding.run_id,
      a.binding.action_id,
      a.decision,
      a.reason,
      writeRecord(a),
    );
  }

  findApproval(runId: string, actionId: string): ApprovalRecord | undefined {
    const row = this.sql("SELECT record FROM approvals WHERE run_id = ? AND action_id = ?").get(runId, actionId) as { record: string } | undefined;
    return row && readRecord(ApprovalRecord, row.record, "approval");
  }

  // events -------------------------------------------------------------
  /** Appends with the next seq of this run; the payload is redacted before it is stored. */
  appendEvent(
    runId: string,
    e: { type: EventType; call_id?: string | null; action_id?: string | null; payload?: Record<string, unknown> },
    at: number,
  ): number {
    const seq = this.lastSeq(runId) + 1;
    const payload = { ...(redactDeep(e.payload ?? {}, this.known()) as Record<string, unknown>), schema_version: 1 };
    this.sql("INSERT INTO events (run_id, seq, type, call_id, action_id, at, payload) VALUES (?, ?, ?, ?, ?, ?, ?)").run(
      runId,
      seq,
      e.type,
      e.call_id ?? null,
      e.action_id ?? null,
      at,
      JSON.stringify(payload),
    );
    return seq;
  }

  lastSeq(runId: string): number {
    return (this.sql("SELECT COALESCE(MAX(seq), 0) AS s FROM events WHERE run_id = ?").get(runId) as { s: number }).s;
  }

  listEvents(runId: string, sinceSeq = 0): EventRow[] {
    const rows = this.sql("SELECT seq, type, call_id, action_id, at, payload FROM events WHERE run_id = ? AND seq > ? ORDER BY seq").all(
      runId,
      sinceSeq,
    ) as Array<Omit<EventRow, "payload"> & { payload: string }>;
    return rows.map((r) => {
      const { schema_version: _v, ...payload } = readRecord(EventPayload, r.payload, "event");
      return { ...r, payload };
    });
  }
}
