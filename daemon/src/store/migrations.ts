import type Database from "better-sqlite3";
import { MiniAgentError } from "../errors.js";

/**
 * Ordered, append-only schema migrations. A ledger written by a newer mini-agent
 * (a version above the last one here) is refused rather than guessed at.
 */
const MIGRATIONS: ReadonlyArray<{ version: number; sql: string }> = [
  {
    version: 1,
    sql: `
      CREATE TABLE runs (
        run_id        TEXT PRIMARY KEY,
        created_at    INTEGER NOT NULL,
        status        TEXT NOT NULL,
        reason        TEXT,
        workspace     TEXT NOT NULL,
        replay_cursor INTEGER NOT NULL DEFAULT 0,
        record        TEXT NOT NULL,
        state         TEXT NOT NULL
      );
      CREATE INDEX runs_workspace ON runs(workspace);

      CREATE TABLE bindings (
        run_id      TEXT PRIMARY KEY REFERENCES runs(run_id),
        workspace   TEXT NOT NULL,
        control_dir TEXT NOT NULL,
        binding_id  TEXT NOT NULL,
        record      TEXT NOT NULL
      );

      CREATE TABLE messages (
        run_id  TEXT NOT NULL REFERENCES runs(run_id),
        idx     INTEGER NOT NULL,
        role    TEXT NOT NULL,
        call_id TEXT,
        record  TEXT NOT NULL,
        PRIMARY KEY (run_id, idx)
      );

      CREATE TABLE actions (
        run_id          TEXT NOT NULL REFERENCES runs(run_id),
        action_id       TEXT NOT NULL,
        call_id         TEXT NOT NULL,
        path            TEXT NOT NULL,
        status          TEXT NOT NULL,
        before_hash     TEXT NOT NULL,
        after_hash      TEXT NOT NULL,
        manifest_digest TEXT NOT NULL,
        record          TEXT NOT NULL,
        intent          TEXT,
        receipt         TEXT,
        PRIMARY KEY (run_id, action_id)
      );

      CREATE TABLE approvals (
        run_id    TEXT NOT NULL REFERENCES runs(run_id),
        action_id TEXT NOT NULL,
        decision  TEXT NOT NULL,
        reason    TEXT,
        record    TEXT NOT NULL,
        PRIMARY KEY (run_id, action_id)
      );

      CREATE TABLE events (
        run_id    TEXT NOT NULL REFERENCES runs(run_id),
        seq       INTEGER NOT NULL,
        type      TEXT NOT NULL,
        call_id   TEXT,
        action_id TEXT,
        at        INTEGER NOT NULL,
        payload   TEXT NOT NULL,
        PRIMARY KEY (run_id, seq)
      );
    `,
  },
  {
    // the trace is append-only: the database itself refuses to rewrite or drop an event
    version: 2,
    sql: `
      CREATE TRIGGER events_append_only_update BEFORE UPDATE ON events
      BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
      CREATE TRIGGER events_append_only_delete BEFORE DELETE ON events
      BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
    `,
  },
];

export const LATEST_SCHEMA = MIGRATIONS[MIGRATIONS.length - 1]!.version;

export function migrate(db: Database.Database, now: () => number): void {
  db.exec("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)");
  const row = db.prepare("SELECT MAX(version) AS v FROM schema_version").get() as { v: number | null };
  const current = row.v ?? 0;
  if (current > LATEST_SCHEMA) {
    throw new MiniAgentError("schema_version_unsupported", `ledger schema version ${current} is newer than this mini-agent understands (${LATEST_SCHEMA})`, {
      details: { found: current, supported: LATEST_SCHEMA },
    });
  }
  for (const m of MIGRATIONS) {
    if (m.version <= current) continue;
    db.transaction(() => {
      db.exec(m.sql);
      db.prepare("INSERT INTO schema_version (version, applied_at) VALUES (?, ?)").run(m.version, now());
    })();
  }
}
