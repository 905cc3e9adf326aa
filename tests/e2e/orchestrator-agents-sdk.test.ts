import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { labelFilter, RUN_LABEL } from "../../daemon/src/sandbox/labels.js";
import { createDockerClient } from "../../daemon/src/sandbox/docker-client.js";
import { pinTestImage } from "../kit/sandbox-image.js";
import { REPO, runClient, Started, stateDirIn, printedJson } from "./harness.js";

/**
 * Issue 14's done-when for the OpenAI Agents SDK, through the real daemon and
 * client: `run --orchestrator agents-sdk` on the container backend completes
 * with two approvals while the daemon is SIGKILLed at each approval (a new
 * daemon resumes the SDK's saved RunState), with exactly two writes; and a
 * cancel while it waits for approval ends it `cancelled`.
 */
const FIXTURE = path.join(REPO, "fixtures/linkcheck");
const docker = createDockerClient(process.env);
const started = new Started();
let imageLock: string;

const stateDirWithImage = (): string => stateDirIn(started.dir("ma-sdk-e2e-"), imageLock);

async function status(socket: string, runId: string) {
  return printedJson(await runClient(["status", runId, "--json", "--socket", socket])) as {
    status: string;
    reason: string | null;
    orchestrator?: string;
    pending_action: { action_id: string } | null;
  };
}

function ledgerEvents(stateDir: string, runId: string): Array<{ type: string; payload: string }> {
  const db = new Database(path.join(stateDir, "ledger.sqlite"), { readonly: true, fileMustExist: true });
  try {
    return db.prepare("SELECT type, payload FROM events WHERE run_id = ? ORDER BY seq").all(runId) as Array<{ type: string; payload: string }>;
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  await docker.ping(); // needs the real engine; fail clearly when it is missing
  imageLock = path.join(started.dir("ma-sdk-e2e-image-"), "sandbox-image.lock.json");
  await pinTestImage(imageLock);
});
afterEach(async () => {
  await started.stopDaemons("SIGTERM");
});
afterAll(async () => {
  await started.stopDaemons("SIGKILL");
  started.removeDirs();
});

describe("mini-agent-client run --orchestrator agents-sdk through the daemon", () => {
  it("completes fixtures/linkcheck with two approvals on the container backend, the daemon SIGKILLed at each approval, with exactly two writes", async () => {
    const stateDir = stateDirWithImage();
    const ws = path.join(path.dirname(stateDir), "ws");

    let d = await started.daemon({ stateDir });
    const first = await runClient(["run", "--fixture", FIXTURE, "--workspace", ws, "--orchestrator", "agents-sdk", "--socket", d.socketPath]);
    expect({ code: first.code, err: first.stderr }).toMatchObject({ code: 3 });
    const runId = /run (\S+) started/.exec(first.stdout)?.[1] ?? "";
    const s1 = await status(d.socketPath, runId);
    expect(s1).toMatchObject({ status: "awaiting_approval", orchestrator: "agents-sdk" });
    expect(fs.existsSync(path.join(stateDir, "orchestrators", "agents-sdk", `${runId}.json`))).toBe(true);

    await d.stop("SIGKILL");
    d = await started.daemon({ stateDir });
    expect((await status(d.socketPath, runId)).status).toBe("awaiting_approval");
    const second = await runClient(["approve", runId, s1.pending_action!.action_id, "--socket", d.socketPath]);
    expect({ code: second.code, out: second.stdout + second.stderr }).toMatchObject({ code: 3 });
    const s2 = await status(d.socketPath, runId);
    expect(s2.pending_action!.action_id).not.toBe(s1.pending_action!.action_id);

    await d.stop("SIGKILL");
    d = await started.daemon({ stateDir });
    const done = await runClient(["approve", runId, s2.pending_action!.action_id, "--socket", d.socketPath]);
    expect({ code: done.code, out: done.stdout + done.stderr }).toMatchObject({ code: 0 });
    expect(done.stdout).toContain("completed: verified by the host Verifier");

    const events = ledgerEvents(stateDir, runId);
    expect(events.filter((e) => e.type === "action_written")).toHaveLength(2);
    expect(events.filter((e) => e.type === "action_receipt")).toHaveLength(2);
    expect(events.filter((e) => e.type === "approval_recorded")).toHaveLength(2);
    const created = JSON.parse(events.find((e) => e.type === "run_created")!.payload) as { orchestrator: unknown };
    expect(created.orchestrator).toMatchObject({ name: "agents-sdk", package: "@openai/agents" });
    expect(await docker.listContainers({ all: true, filters: { label: [labelFilter(RUN_LABEL, runId)] } })).toEqual([]);
  });

  it("a cancel while the run waits for approval ends it cancelled (exit 4) and nothing is written", async () => {
    const stateDir = stateDirWithImage();
    const ws = path.join(path.dirname(stateDir), "ws");
    const d = await started.daemon({ stateDir });
    const first = await runClient(["run", "--fixture", FIXTURE, "--workspace", ws, "--orchestrator", "agents-sdk", "--socket", d.socketPath]);
    expect(first.code).toBe(3);
    const runId = /run (\S+) started/.exec(first.stdout)?.[1] ?? "";
    const cancelled = await runClient(["cancel", runId, "--socket", d.socketPath]);
    expect(cancelled.code).toBe(4);
    expect(await status(d.socketPath, runId)).toMatchObject({ status: "cancelled", reason: "cancelled" });
    expect(ledgerEvents(stateDir, runId).filter((e) => e.type === "action_written")).toHaveLength(0);
    expect(fs.existsSync(path.join(ws, "tests/test_agent_nested.js"))).toBe(false);
    expect(fs.readFileSync(path.join(ws, "src/linkcheck.js"))).toEqual(fs.readFileSync(path.join(FIXTURE, "repo/src/linkcheck.js")));
  });
});
