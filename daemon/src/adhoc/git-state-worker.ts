import { parentPort, workerData } from "node:worker_threads";
import { gitStatus } from "./git-status.js";

/**
 * The worker thread's entry (started by git-state.ts): one status read, its
 * result posted back, nothing else. It runs off the daemon's event loop so a
 * large repository costs the daemon a core for a while, never its answers.
 * A failure is posted as data: the caller turns it into "no list".
 */
const { workspace, maxEntries } = workerData as { workspace: string; maxEntries: number };
gitStatus(workspace, maxEntries).then(
  (result) => parentPort?.postMessage({ result }),
  (err: unknown) => parentPort?.postMessage({ failed: (err as { code?: unknown } | null)?.code ?? "unreadable" }),
);
