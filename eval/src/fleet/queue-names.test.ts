import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { IMAGE_FAMILIES } from "../../../daemon/src/contracts/sandbox.js";
import { openSuiteRun, readSuiteFamilies, readSuiteRun } from "./fleet-state.js";
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

  it("regression: eval cancel reached only the built-in families' queues, so a queued case of a custom family survived it; the run's families are in fleet.json and cancel clears their queues", () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), "ma-fleet-state-"));
    try {
      const id = openSuiteRun(out, false, "redis://127.0.0.1:6390/0", false, ["greet", "node", "greet"]);
      expect(readSuiteRun(out)).toBe(id);
      expect(readSuiteFamilies(out)).toEqual(["greet", "node"]);
      const all = allQueueNames(readSuiteFamilies(out));
      for (const rt of ["runc", "runsc"] as const) for (const m of ["replay", "live"] as const) expect(all).toContain(queueFor(rt, "greet", m));
      expect(new Set(all).size).toBe(all.length);
      // a fleet.json written before the families were kept still names its run
      fs.writeFileSync(path.join(out, "fleet.json"), JSON.stringify({ schema_version: 1, suite_run: id, queue: "q" }));
      expect([readSuiteRun(out), readSuiteFamilies(out)]).toEqual([id, []]);
    } finally {
      fs.rmSync(out, { recursive: true, force: true });
    }
  });
});
