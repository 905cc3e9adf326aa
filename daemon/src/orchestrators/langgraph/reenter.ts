import type { ActionStatus } from "../../store/records.js";
import type { RunStatus } from "../../contracts/run.js";
import type { DriveMode } from "../orchestrator.js";
import { decisionOf, type ApprovalResume, type Entry } from "./routes.js";

/** How a drive enters the graph: resume the paused approval node, or start fresh from `enter` (which reads the ledger). */
export type Start = { kind: "resume"; value: ApprovalResume } | { kind: "fresh"; entry: Entry };

export interface ReentryFacts {
  mode: DriveMode;
  /** the action the checkpoint's pending interrupt is about, when the thread is paused at the approval node */
  waitingFor: string | null;
  runStatus: RunStatus;
  /** the ledger's status of that action (null: the ledger does not know it) */
  actionStatus: ActionStatus | null;
}

/**
 * The checkpoint only says where the graph was; the ledger says what happened.
 * A pause is resumed only when the ledger agrees with it: the run is running
 * again and the action the interrupt waits for has been decided. Anything else
 * (no checkpoint, a checkpoint cut off mid-step, a pause for another action,
 * an action nobody decided) starts fresh, and the `enter` node carries out
 * what the ledger left pending before the model is asked again.
 */
export function startOf(f: ReentryFacts): Start {
  if (f.mode === "verify") return { kind: "fresh", entry: "verify" };
  if (f.waitingFor !== null && f.runStatus === "running" && f.actionStatus !== null) {
    const decision = decisionOf(f.actionStatus);
    if (decision) return { kind: "resume", value: { action_id: f.waitingFor, decision } };
  }
  return { kind: "fresh", entry: "model" };
}
