import { describe, expect, it } from "vitest";
import { exportJsonl } from "./export.js";

describe("canonical trace export", () => {
  const paths = { workspace: "/tmp/x/state/ws", controlDir: "/tmp/x/state/control/run_1", stateDir: "/tmp/x/state" };
  const events = [
    { seq: 1, type: "run_created" as const, call_id: null, action_id: null, payload: { at: 123, workspace: "/tmp/x/state/ws", budgets: { total_seconds: 9 } } },
    {
      seq: 2,
      type: "tool_observed" as const,
      call_id: "c1",
      action_id: null,
      payload: { duration_ms: 55, note: "read /tmp/x/state/ws/src/a.js and /tmp/x/state/control/run_1/baseline" },
    },
  ];

  it("replaces host paths by placeholders (longest first) and drops wall-clock fields", () => {
    const out = exportJsonl(events, paths);
    expect(out).toBe(
      '{"seq":1,"type":"run_created","call_id":null,"action_id":null,"payload":{"workspace":"<workspace>","budgets":{"total_seconds":9}}}\n' +
        '{"seq":2,"type":"tool_observed","call_id":"c1","action_id":null,"payload":{"note":"read <workspace>/src/a.js and <control>/baseline"}}\n',
    );
  });

  it("gives the same bytes for the same run wherever it ran", () => {
    const moved = JSON.parse(JSON.stringify(events).replaceAll("/tmp/x", "/home/y/other"));
    const other = { workspace: "/home/y/other/state/ws", controlDir: "/home/y/other/state/control/run_1", stateDir: "/home/y/other/state" };
    expect(exportJsonl(moved, other)).toBe(exportJsonl(events, paths));
  });
});
