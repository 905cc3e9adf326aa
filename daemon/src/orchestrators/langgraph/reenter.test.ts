import { describe, expect, it } from "vitest";
import { startOf } from "./reenter.js";

describe("langgraph re-entry: the ledger decides how a drive enters the graph", () => {
  const base = { mode: "model" as const, waitingFor: "act_1", runStatus: "running" as const, actionStatus: "approved" as const };

  it("resumes the paused approval node with what the ledger says was decided", () => {
    expect(startOf(base)).toEqual({ kind: "resume", value: { action_id: "act_1", decision: "approved" } });
    expect(startOf({ ...base, actionStatus: "receipted" })).toEqual({ kind: "resume", value: { action_id: "act_1", decision: "approved" } });
    expect(startOf({ ...base, actionStatus: "rejected" })).toEqual({ kind: "resume", value: { action_id: "act_1", decision: "rejected" } });
    expect(startOf({ ...base, actionStatus: "stale" })).toEqual({ kind: "resume", value: { action_id: "act_1", decision: "stale" } });
  });

  it("a run resumed while verifying goes straight to the Verifier, whatever the checkpoint says", () => {
    expect(startOf({ ...base, mode: "verify" })).toEqual({ kind: "fresh", entry: "verify" });
  });

  it("starts fresh (the ledger wins) when no checkpoint waits, the action is undecided or unknown, or the run is not running", () => {
    expect(startOf({ ...base, waitingFor: null })).toEqual({ kind: "fresh", entry: "model" });
    expect(startOf({ ...base, actionStatus: "pending" })).toEqual({ kind: "fresh", entry: "model" });
    expect(startOf({ ...base, actionStatus: null })).toEqual({ kind: "fresh", entry: "model" });
    expect(startOf({ ...base, runStatus: "awaiting_approval" })).toEqual({ kind: "fresh", entry: "model" });
  });
});
