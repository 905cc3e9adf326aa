import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { pino } from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { RUN_TRANSITIONS, RunStatus, TERMINAL_STATUSES } from "../contracts/run.js";
import { tempLedgers, testRecord } from "../store/ledger.testkit.js";
import { Trace } from "../trace/trace.js";
import { initialState } from "./create-run/index.js";
import type { RuntimeDeps } from "./deps.js";
import { insertNewRun, markInterrupted, moveRun } from "./lifecycle.js";
import { codeOf } from "../errors.testkit.js";

const ledgers = tempLedgers("mini-agent-lifecycle-");
afterAll(() => ledgers.cleanup());

/** A real ledger and trace; the rest of RuntimeDeps is never reached by the lifecycle. */
function depsWithRun(status: RunStatus): RuntimeDeps {
  const { ledger } = ledgers.open();
  const deps = { ledger, trace: new Trace(ledger, () => 7), logger: pino({ level: "silent" }) } as unknown as RuntimeDeps;
  insertNewRun(deps, {
    run_id: "run_1",
    created_at: 1,
    state: initialState(),
    record: testRecord(),
  });
  // put the row where the case starts, as a past move would have left it
  if (status !== "running") ledger.setRunStatus("run_1", status, "set up");
  return deps;
}

describe("run lifecycle", () => {
  it("starts every run as running", () => {
    const deps = depsWithRun("running");
    expect(deps.ledger.getRun("run_1")).toMatchObject({ status: "running", reason: "started" });
    deps.ledger.close();
  });

  it("refuses an illegal transition (running -> completed skips the Verifier) with illegal_transition, writing nothing", () => {
    const deps = depsWithRun("running");
    expect(codeOf(() => moveRun(deps, "run_1", "completed", "done?", { state: (s) => void (s.counters.writes = 9), stopped: { reason: "done?" } }))).toBe(
      "illegal_transition",
    );
    const run = deps.ledger.getRun("run_1");
    expect([run.status, run.reason, run.state.counters.writes]).toEqual(["running", "started", 0]);
    expect(deps.ledger.listEvents("run_1")).toEqual([]);
    deps.ledger.close();
  });

  it.each(TERMINAL_STATUSES.map((s) => [s]))("never leaves the terminal status %s, not even for itself or for interrupted", (terminal) => {
    const deps = depsWithRun(terminal);
    for (const to of RunStatus.options) expect(codeOf(() => moveRun(deps, "run_1", to, "again"))).toBe("illegal_transition");
    expect(codeOf(() => markInterrupted(deps, "run_1", "running", "shutdown"))).toBe("illegal_transition");
    expect(deps.ledger.getRun("run_1").status).toBe(terminal);
    deps.ledger.close();
  });

  it("knows exactly the four terminal statuses, and every status is reachable from a new run", () => {
    expect([...TERMINAL_STATUSES].sort()).toEqual(["cancelled", "completed", "failed", "uncertain"]);
    const seen = new Set<RunStatus>(["running"]);
    for (let grew = true; grew; ) {
      grew = false;
      for (const from of [...seen]) for (const to of RUN_TRANSITIONS[from]) if (!seen.has(to)) seen.add(to), (grew = true);
    }
    expect([...seen].sort()).toEqual([...RunStatus.options].sort());
  });

  it("allows every move the table lists and says where it came from", () => {
    for (const from of RunStatus.options) {
      for (const to of RUN_TRANSITIONS[from]) {
        const deps = depsWithRun(from);
        expect(moveRun(deps, "run_1", to, `to ${to}`)).toBe(from);
        expect(deps.ledger.getRun("run_1").status).toBe(to);
        deps.ledger.close();
      }
    }
  });

  it("marks a run interrupted in one place: status, the phase to resume into, the time spent and one run_stopped event", () => {
    const deps = depsWithRun("verifying");
    markInterrupted(deps, "run_1", "verifying", "daemon shut down while verifying; resume to continue", { elapsedMs: 1234 });
    const run = deps.ledger.getRun("run_1");
    expect([run.status, run.reason, run.state.interrupted_from, run.state.counters.elapsed_ms]).toEqual([
      "interrupted",
      "daemon shut down while verifying; resume to continue",
      "verifying",
      1234,
    ]);
    expect(deps.ledger.listEvents("run_1").map((e) => [e.type, e.payload])).toEqual([
      ["run_stopped", { status: "interrupted", interrupted_from: "verifying" }],
    ]);
    deps.ledger.close();
  });

  it("is the only writer of run status: no other daemon source file sets a status or inserts a run (regression: nine writers in seven files)", () => {
    const src = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
    const offenders: string[] = [];
    for (const rel of fs.readdirSync(src, { recursive: true }) as string[]) {
      if (
        !rel.endsWith(".ts") ||
        rel.endsWith(".test.ts") ||
        rel.endsWith(".testkit.ts") ||
        rel === path.join("runtime", "lifecycle.ts") ||
        rel === path.join("store", "ledger.ts")
      )
        continue;
      const text = fs.readFileSync(path.join(src, rel), "utf8");
      if (/\.setRunStatus\(|\.insertRun\(/.test(text)) offenders.push(rel);
    }
    expect(offenders).toEqual([]);
  });
});
