import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { statePath } from "../../config/state-dir.js";
import { TERMINAL_STATUSES } from "../../contracts/run.js";
import type { Ledger } from "../../store/ledger.js";

/** `<state>/orchestrators/langgraph.sqlite`: the graph's checkpoints, apart from the ledger (they are not the truth, only where the graph was). */
export function checkpointFile(stateDir: string): string {
  return path.join(statePath(stateDir, "orchestrators"), "langgraph.sqlite");
}

/** SqliteSaver creates its tables lazily on first use; the sweep reads them before any graph call. */
class Saver extends SqliteSaver {
  ready(): void {
    this.setup();
  }
}

/**
 * One SQLite saver per daemon. The folder is 0700 and the file 0600 before
 * SQLite opens it (its -wal and -shm files take the file's mode).
 */
export class Checkpoints {
  readonly saver: Saver;
  private readonly db: Database.Database;

  constructor(readonly file: string) {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    fs.chmodSync(path.dirname(file), 0o700);
    fs.closeSync(fs.openSync(file, "a", 0o600));
    fs.chmodSync(file, 0o600);
    this.db = new Database(file);
    this.saver = new Saver(this.db);
    this.saver.ready();
  }

  /**
   * Growth: a run's checkpoints live only while the run can still go on. A
   * drive that ends the run deletes its thread; threads of runs that ended
   * without a drive (cancelled while awaiting approval) or that the ledger
   * does not know are deleted here, at the first drive of each daemon.
   */
  async forget(runId: string): Promise<void> {
    await this.saver.deleteThread(runId);
  }

  async sweep(ledger: Ledger): Promise<string[]> {
    const threads = (this.db.prepare("SELECT DISTINCT thread_id FROM checkpoints").all() as Array<{ thread_id: string }>).map((r) => r.thread_id);
    const gone = threads.filter((id) => {
      const run = ledger.findRun(id);
      return !run || TERMINAL_STATUSES.includes(run.status);
    });
    for (const id of gone) await this.saver.deleteThread(id);
    return gone;
  }

  /** how many checkpoints a thread holds (the growth the tests watch) */
  count(runId: string): number {
    return (this.db.prepare("SELECT COUNT(*) AS n FROM checkpoints WHERE thread_id = ?").get(runId) as { n: number }).n;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
