import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { statePath } from "../../daemon/src/config/state-dir.js";
import { CRASH_ENV } from "../../daemon/src/runtime/crash.js";
import { isMiniAgentError } from "../../daemon/src/errors.js";
import type { CrashPoint } from "../../daemon/src/runtime/ports.js";
import type { RunServiceImpl } from "../../daemon/src/runtime/service-impl.js";
import type { PendingActionView, TraceEvent } from "../../daemon/src/runtime/service.js";
import { fileHash, runReplay, startService, withService, type ReplayRunOutcome } from "./harness.js";
import type { ExperimentContext, GroupDefinition, Json } from "./types.js";

/**
 * Group 3, recovery. Crashes are real: the step runs in its own process
 * (crash-child.ts) which the runtime SIGKILLs at the named crash point
 * (MINI_AGENT_CRASH_AT); then a NEW RunService on the same state dir, what a
 * restarted daemon builds, recovers at startup and resumes.
 */
const execFileP = promisify(execFile);

/** One approve/resume in a child process that is killed at `point`; "killed:<point>" when it was. */
async function inChild(ctx: ExperimentContext, point: CrashPoint, args: string[]): Promise<string> {
  const stateDir = path.join(ctx.scratch, "state");
  if (ctx.imageLockPath) await fs.copyFile(ctx.imageLockPath, statePath(stateDir, "imageLock"));
  const child = path.join(ctx.repoRoot, "experiments", "src", "crash-child.ts");
  const env = { ...ctx.dockerEnv, [CRASH_ENV]: point };
  try {
    const { stdout } = await execFileP(ctx.nodeExecPath, ["--import", "tsx", child, stateDir, path.join(ctx.repoRoot, "fixtures"), ...args], {
      cwd: ctx.repoRoot,
      env,
      timeout: 300_000,
    });
    return String((JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}") as { outcome?: unknown }).outcome ?? "no_outcome");
  } catch (err) {
    const e = err as { signal?: string | null; stdout?: string };
    if (e.signal === "SIGKILL") return `killed:${point}`;
    return "child_failed";
  }
}

function outcomeOf(err: unknown): string {
  return isMiniAgentError(err) ? err.code : "unexpected";
}

async function attempt(f: () => Promise<unknown>): Promise<string> {
  try {
    await f();
    return "ok";
  } catch (err) {
    return outcomeOf(err);
  }
}

function forAction(events: TraceEvent[], type: TraceEvent["type"], actionId: string): TraceEvent[] {
  return events.filter((e) => e.type === type && e.action_id === actionId);
}

/** A restarted daemon: a new service on the same state dir, startup recovery first. */
async function restart(ctx: ExperimentContext): Promise<RunServiceImpl> {
  const svc = startService(ctx);
  await svc.recoverAtStartup();
  return svc;
}

/**
 * The canonical replay up to its first write, then the service shut down as a
 * stopped daemon would leave it: the run waits for approval of that write.
 */
async function pausedAtFirstWrite(ctx: ExperimentContext): Promise<{ out: ReplayRunOutcome; pending: PendingActionView } | { error: Json }> {
  const out = await withService(ctx, (svc) => runReplay(svc, ctx, { approve: false }));
  const pending = out.view.pending_action;
  return pending ? { out, pending } : { error: { error: "no_pending_action", status: out.view.status } };
}

async function inode(file: string): Promise<number | null> {
  try {
    return (await fs.stat(file)).ino;
  } catch {
    return null;
  }
}

export const group3: GroupDefinition = {
  id: "group-3",
  title: "recovery",
  scenarios: [
    {
      id: "repeated_resume_one_write",
      title: "crash after the intent, twice, then resume: the approved action is written once",
      expected: {
        attempts: ["killed:after_intent", "killed:after_intent", "ok"],
        intents: 1,
        writes: 1,
        receipts: 1,
        file_matches_after_hash: true,
        status_after: "awaiting_approval",
      },
      criterion:
        "a process approving the first write is SIGKILLed right after action_intent; a second process resuming the run is SIGKILLed at the same point again; a third (this one) resumes cleanly. For the one approved action there is exactly 1 action_intent, 1 action_written and 1 action_receipt, the file on disk has the approved after-hash, and the run goes on to the next approval",
      does_not_prove: "durability across power loss (only a process kill is exercised), or recovery at points other than the named ones",
      async run(ctx) {
        const paused = await pausedAtFirstWrite(ctx);
        if ("error" in paused) return paused.error;
        const { out, pending } = paused;
        const attempts = [
          await inChild(ctx, "after_intent", ["approve", out.runId, pending.action_id]),
          await inChild(ctx, "after_intent", ["resume", out.runId]),
        ];
        const svc = await restart(ctx);
        try {
          attempts.push(
            await attempt(async () => {
              await svc.resume(out.runId);
              await svc.settled(out.runId);
            }),
          );
          const view = await svc.settled(out.runId);
          const events = await svc.events(out.runId, 0, 0);
          const row = svc.ledger.findAction(out.runId, pending.action_id);
          return {
            attempts,
            intents: forAction(events, "action_intent", pending.action_id).length,
            writes: forAction(events, "action_written", pending.action_id).length,
            receipts: forAction(events, "action_receipt", pending.action_id).length,
            file_matches_after_hash: row !== undefined && (await fileHash(path.join(out.workspace, row.record.path))) === row.record.after_hash,
            status_after: view.status,
          };
        } finally {
          await svc.shutdown();
        }
      },
    },
    {
      id: "edited_after_proposal_stale",
      title: "the workspace is edited between proposal and approval: approval_stale, the edit is kept",
      expected: { approve: "approval_stale", edit_kept: true, writes: 0, created_file_absent: true },
      criterion:
        "approving after an external edit of src/linkcheck.js is refused with approval_stale; the edited bytes are still on disk, the proposed file was not created and no write happened",
      does_not_prove: "protection against an edit made during the write itself (commit re-checks, but this scenario edits before approval)",
      async run(ctx) {
        const svc = startService(ctx);
        try {
          const out = await runReplay(svc, ctx, { approve: false });
          const pending = out.view.pending_action;
          if (!pending) return { error: "no_pending_action", status: out.view.status };
          const src = path.join(out.workspace, "src", "linkcheck.js");
          await fs.appendFile(src, "// the user's own edit, made while the proposal waited\n");
          const edited = await fileHash(src);
          const approve = await attempt(() => svc.approve(out.runId, pending.action_id));
          await svc.settled(out.runId);
          const events = await svc.events(out.runId, 0, 0);
          return {
            approve,
            edit_kept: (await fileHash(src)) === edited,
            writes: events.filter((e) => e.type === "action_written").length,
            created_file_absent: (await fileHash(path.join(out.workspace, pending.path))) === null,
          };
        } finally {
          await svc.shutdown();
        }
      },
    },
    {
      id: "receipt_lost_recovered",
      title: "crash after the write, before its receipt: resume records the receipt and does not write again",
      expected: {
        approve: "killed:after_write_before_receipt",
        resume: "ok",
        writes: 1,
        receipts: 1,
        receipt_source: "recovered",
        same_inode: true,
        file_matches_after_hash: true,
      },
      criterion:
        "the approving process is SIGKILLed after the write and before its receipt; the file already has the after-hash; a new service's resume records exactly one receipt with source=recovered, and the file keeps its inode (writes are atomic renames, so a second write would give a new inode)",
      does_not_prove: "recovery when the file was changed by someone else meanwhile (that run stops as uncertain; not exercised here)",
      async run(ctx) {
        const paused = await pausedAtFirstWrite(ctx);
        if ("error" in paused) return paused.error;
        const { out, pending } = paused;
        const approve = await inChild(ctx, "after_write_before_receipt", ["approve", out.runId, pending.action_id]);
        const file = path.join(out.workspace, pending.path);
        const inodeBefore = await inode(file);
        const svc = await restart(ctx);
        try {
          const resume = await attempt(() => svc.resume(out.runId));
          await svc.settled(out.runId);
          const events = await svc.events(out.runId, 0, 0);
          const receipts = forAction(events, "action_receipt", pending.action_id);
          const row = svc.ledger.findAction(out.runId, pending.action_id);
          return {
            approve,
            resume,
            writes: forAction(events, "action_written", pending.action_id).length,
            receipts: receipts.length,
            receipt_source: (receipts[0]?.payload.source as Json) ?? null,
            same_inode: inodeBefore !== null && inodeBefore === (await inode(file)),
            file_matches_after_hash: row !== undefined && (await fileHash(file)) === row.record.after_hash,
          };
        } finally {
          await svc.shutdown();
        }
      },
    },
  ],
};
