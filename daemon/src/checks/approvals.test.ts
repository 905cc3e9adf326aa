import { describe, expect, it } from "vitest";
import { CHECK_APPROVAL_TTL_MS, createCheckApprovals } from "./approvals.js";

describe("a sandbox_exec's question to a person", () => {
  it("expires: an answer older than its window is unknown, never a pass", () => {
    let t = 0;
    const a = createCheckApprovals(() => t);
    const q = a.ask("/w", ["node", "-e", "1"], "d1");
    a.decide(q.id, "approve");
    t = CHECK_APPROVAL_TTL_MS + 1;
    expect(() => a.use(q.id, "/w", ["node", "-e", "1"], "d1")).toThrow(expect.objectContaining({ code: "approval_unknown" }));
  });

  it("an id that is not one of ours is unknown, and the store holds a bounded number of questions", () => {
    const a = createCheckApprovals(() => 0);
    expect(() => a.get("chk_../../etc")).toThrow(expect.objectContaining({ code: "approval_unknown" }));
    const first = a.ask("/w", ["x"], "d");
    for (let i = 0; i < 300; i++) a.ask("/w", ["x"], "d");
    expect(() => a.get(first.id)).toThrow(expect.objectContaining({ code: "approval_unknown" }));
  });
});
