import { describe, expect, it } from "vitest";
import { IMAGE_FAMILIES } from "../../../daemon/src/contracts/sandbox.js";
import { allQueueNames, queueFor } from "./queue-names.js";

describe("queue names", () => {
  it("regression: eval cancel clears every queue a case can be on, the live-model queues too (it opened only the replay ones, so a queued live case survived a cancel)", () => {
    const all = allQueueNames();
    for (const rt of ["runc", "runsc"] as const)
      for (const f of IMAGE_FAMILIES) for (const m of ["replay", "live"] as const) expect(all).toContain(queueFor(rt, f, m));
    expect(new Set(all).size).toBe(all.length);
  });

  it("keeps a live case off the replay queue of its runtime and family", () => {
    expect(queueFor("runc", "node", "live")).not.toBe(queueFor("runc", "node", "replay"));
    expect(queueFor("runc", "node", "replay")).toBe("mini-agent-eval-runc-node");
  });
});
