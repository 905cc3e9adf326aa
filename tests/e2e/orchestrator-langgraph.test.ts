import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { checkpointFile } from "../../daemon/src/orchestrators/langgraph/index.js";
import { packageVersion } from "../../daemon/src/orchestrators/versions.js";
import { createDockerClient } from "../../daemon/src/sandbox/docker-client.js";
import { pinTestImage } from "../kit/sandbox-image.js";
import { REPO, runClient, Started, stateDirIn, printedJson } from "./harness.js";

/**
 * Issue 14's done-when for LangGraph, through the real daemon and client:
 * `run --orchestrator langgraph` completes fixtures/linkcheck with two
 * approvals on the container backend, surviving a daemon SIGKILL at each
 * approval with exactly two writes; status, resume, cancel and the exit codes
 * behave as for the manual orchestrator.
 */
const FIXTURE = path.join(REPO, "fixtures/linkcheck");
const docker = createDockerClient(process.env);
const started = new Started();
let imageLock: string;

const stateDirWithImage = (): string => stateDirIn(started.dir("ma-lg-"), imageLock);

async function status(socket: string, runId: string) {
  return printedJson(await runClient(["status", runId, "--json", "--socket", socket])) as {
    status: string;
    reason: string | null;
    action_id: string | null;
    orchestrator?: string;
  };
}

function eventTypes(stateDir: string, runId: string): Array<{ type: string; payload: Record<string, unknown> }> {
  const db = new Database(path.join(stateDir, "ledger.sqlite"), { readonly: true });
  try {
    return (db.prepare("SELECT type, payload FROM events WHERE run_id = ? ORDER BY seq").all(runId) as Array<{ type: string; payload: string }>).map((e) => ({
      type: e.type,
      payload: JSON.parse(e.payload) as Record<string, unknown>,
    }));
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  await docker.ping();
  imageLock = path.join(started.dir("ma-lg-image-"), "sandbox-image.lock.json");
  await pinTestImage(imageLock);
});
afterEach(async () => {
  await started.stopDaemons("SIGTERM");
});
afterAll(async () => {
  await started.stopDaemons("SIGKILL");
  started.removeDirs();
});

/** waits until the daemon logged `n` ended langgraph drives: the pause's checkpoint is then on disk */
async function drivesEnded(stateDir: string, n: number): Promise<void> {
  const log = path.join(stateDir, "logs", "daemon.log");
  const deadline = Date.now() + 30_000;
  for (;;) {
    const ended = fs
      .readFileSync(log, "utf8")
      .split("\n")
      .filter((l) => l.includes('"langgraph drive ended"')).length;
    if (ended >= n) return;
    if (Date.now() > deadline) throw new Error(`${ended} of ${n} langgraph drives ended in ${log}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** starts a run under `orchestrator` up to its first approval (exit 3) */
async function firstPause(socket: string, orchestrator: string, stateDir: string) {
  const ws = path.join(path.dirname(stateDir), `ws-${orchestrator}`);
  const first = await runClient(["run", "--fixture", FIXTURE, "--workspace", ws, "--orchestrator", orchestrator, "--socket", socket]);
  expect(first.code, first.stdout + first.stderr).toBe(3);
  const runId = /run (\S+) started/.exec(first.stdout)?.[1] ?? "";
  return { ws, runId, first };
}

describe("mini-agent-client run --orchestrator langgraph through a spawned daemon", () => {
  it("completes with two approvals and survives a daemon SIGKILL at each approval with exactly two writes", async () => {
    const stateDir = stateDirWithImage();
    let d = await started.daemon({ stateDir });
    const { ws, runId, first } = await firstPause(d.socketPath, "langgraph", stateDir);
    expect(first.stdout).toContain("orchestrator langgraph");
    const s1 = await status(d.socketPath, runId);
    expect(s1).toMatchObject({ status: "awaiting_approval", orchestrator: "langgraph" });

    // killed while the run awaits the first approval (its pause checkpointed); a new daemon on the same state dir takes the approval
    await drivesEnded(stateDir, 1);
    d.proc.kill("SIGKILL");
    expect(await d.exited).toBe("SIGKILL");
    d = await started.daemon({ stateDir });
    expect((await status(d.socketPath, runId)).status).toBe("awaiting_approval");
    const second = await runClient(["approve", runId, s1.action_id!, "--socket", d.socketPath]);
    expect(second.code, second.stdout + second.stderr).toBe(3);
    const s2 = await status(d.socketPath, runId);
    expect(s2.action_id).not.toBe(s1.action_id);

    await drivesEnded(stateDir, 2);
    d.proc.kill("SIGKILL");
    expect(await d.exited).toBe("SIGKILL");
    d = await started.daemon({ stateDir });
    const done = await runClient(["approve", runId, s2.action_id!, "--socket", d.socketPath]);
    expect(done.code, done.stdout + done.stderr).toBe(0);
    expect(done.stdout).toContain("completed: verified by the host Verifier");

    const events = eventTypes(stateDir, runId);
    expect(events.filter((e) => e.type === "action_written")).toHaveLength(2);
    expect(events.filter((e) => e.type === "action_receipt")).toHaveLength(2);
    expect(events.filter((e) => e.type === "approval_recorded")).toHaveLength(2);
    expect(events.find((e) => e.type === "run_created")?.payload.orchestrator).toEqual({
      name: "langgraph",
      package: "@langchain/langgraph",
      version: packageVersion("@langchain/langgraph"),
    });
    expect(fs.readFileSync(path.join(ws, "src/linkcheck.js"), "utf8")).toContain("path.dirname(docAbs)");
    // each new daemon resumed the graph's paused approval node from the checkpoint the killed one left
    const drives = fs
      .readFileSync(path.join(stateDir, "logs", "daemon.log"), "utf8")
      .split("\n")
      .filter((l) => l.includes('"langgraph drive"'))
      .map((l) => (JSON.parse(l) as { start: string }).start);
    expect(drives).toEqual(["fresh", "resume", "resume"]);
    const trace = await runClient(["trace", runId, "--jsonl", "--socket", d.socketPath]);
    expect(trace.code).toBe(0);
    expect(trace.stdout).toContain('"langgraph"');
    // the checkpoints of a finished run are gone
    const db = new Database(checkpointFile(stateDir), { readonly: true });
    try {
      expect(db.prepare("SELECT COUNT(*) AS n FROM checkpoints WHERE thread_id = ?").get(runId)).toEqual({ n: 0 });
    } finally {
      db.close();
    }
  });

  it("resume, reject and cancel at an approval answer as under the manual orchestrator; a cancel while awaiting approval ends cancelled (exit 4)", async () => {
    const stateDir = stateDirWithImage();
    const d = await started.daemon({ stateDir });
    const codes: Record<string, number[]> = {};
    for (const orchestrator of ["manual", "langgraph"]) {
      const { runId } = await firstPause(d.socketPath, orchestrator, stateDir);
      const pending = (await status(d.socketPath, runId)).action_id!;
      const resumed = await runClient(["resume", runId, "--socket", d.socketPath]);
      const unknown = await runClient(["approve", runId, "act_nope", "--socket", d.socketPath]);
      // rejected: the model is told, the run goes on to the next proposal (the second write)
      const rejected = await runClient(["reject", runId, pending, "--reason", "not this one", "--socket", d.socketPath]);
      const afterReject = await status(d.socketPath, runId);
      expect(afterReject.status).toBe("awaiting_approval");
      expect(afterReject.action_id).not.toBe(pending);
      const cancelled = await runClient(["cancel", runId, "--socket", d.socketPath]);
      const end = await status(d.socketPath, runId);
      expect(end.status).toBe("cancelled");
      const again = await runClient(["status", runId, "--socket", d.socketPath]);
      codes[orchestrator] = [resumed.code, unknown.code, rejected.code, cancelled.code, again.code];
    }
    expect(codes.langgraph).toEqual(codes.manual);
    expect(codes.langgraph).toEqual([codes.langgraph![0], codes.langgraph![1], 3, 4, 4]);
  });
});
