import { describe, expect, it } from "vitest";
import type { TraceEvent } from "../../daemon/src/contracts/run-view.js";
import { activityText, nextActivity, StatusLine } from "./progress.js";

let seq = 0;
const ev = (type: TraceEvent["type"], payload: Record<string, unknown> = {}, call_id: string | null = null): TraceEvent => ({
  seq: ++seq,
  type,
  call_id,
  action_id: null,
  payload,
});
const running = { status: "running", backend: "container" } as const;

describe("what the indicator says", () => {
  it("run_tests in the sandbox, from the proposal until its observation", () => {
    const a = nextActivity(null, [ev("tool_proposed", { name: "run_tests" }, "c1")], running, 1000);
    expect(a).toEqual({ label: "running tests in the sandbox", since: 1000, callId: "c1" });
    expect(activityText(a!, 2400)).toBe("running tests in the sandbox… 1.4 s");
    expect(nextActivity(a, [ev("tool_observed", { tool: "run_tests" }, "c1")], running, 2500)).toBeNull();
  });

  it("on the trusted_local backend the tests run on the host, and says so", () => {
    const a = nextActivity(null, [ev("tool_proposed", { name: "run_tests" }, "c1")], { status: "running", backend: "trusted_local" }, 0);
    expect(a?.label).toBe("running tests on the host");
  });

  it("other tools get no timer; another call's observation does not end the tests'", () => {
    expect(nextActivity(null, [ev("tool_proposed", { name: "read_file" }, "c2")], running, 0)).toBeNull();
    const a = nextActivity(null, [ev("tool_proposed", { name: "run_tests" }, "c1")], running, 0);
    expect(nextActivity(a, [ev("tool_observed", {}, "c9")], running, 10)).toBe(a);
  });

  it("the Verifier from verification_started until its verdict", () => {
    const a = nextActivity(null, [ev("verification_started")], { status: "verifying", backend: "container" }, 500);
    expect(activityText(a!, 3700)).toBe("verifying… 3.2 s");
    expect(nextActivity(a, [ev("verification_failed", { reason: "verification_failed" })], { status: "failed", backend: "container" }, 4000)).toBeNull();
  });

  it("a run followed from the middle of a verification shows it too", () => {
    expect(nextActivity(null, [], { status: "verifying", backend: "container" }, 7)?.label).toBe("verifying");
  });

  it("a run that stopped has nothing running, whatever came before", () => {
    const a = nextActivity(null, [ev("tool_proposed", { name: "run_tests" }, "c1")], running, 0);
    expect(nextActivity(a, [], { status: "cancelled", backend: "container" }, 10)).toBeNull();
  });
});

describe("the status line", () => {
  it("on a terminal: drawn over itself with \\r and erase-line, erased when cleared", () => {
    const w: string[] = [];
    const line = new StatusLine((s) => w.push(s), true);
    line.show("verifying… 0.1 s");
    line.show("verifying… 0.2 s");
    line.clear();
    line.clear();
    expect(w).toEqual(["\r\x1b[2Kverifying… 0.1 s", "\r\x1b[2Kverifying… 0.2 s", "\r\x1b[2K"]);
  });

  it("not a terminal: writes nothing at all", () => {
    const w: string[] = [];
    const line = new StatusLine((s) => w.push(s), false);
    line.show("verifying… 0.1 s");
    line.clear();
    expect(w).toEqual([]);
  });
});
