import { describe, expect, it } from "vitest";
import { TraceEvent } from "../../daemon/src/contracts/run-view.js";
import { eventLine } from "./render.js";

const event = (type: string, payload: Record<string, unknown>, call_id: string | null = null): TraceEvent =>
  ({ seq: 7, type, at: 0, call_id, action_id: null, payload: { schema_version: 1, ...payload } }) as unknown as TraceEvent;

describe("trace event lines", () => {
  it("regression: project_context showed only its name; it now shows the rules file and repo map by size and digest", () => {
    const line = eventLine(
      event("project_context", {
        untrusted: true,
        note: "project data",
        rules: { path: "AGENTS.md", bytes: 120, given_bytes: 120, sha256: "a".repeat(64), truncated: false },
        repo_map: { entries: 300, bytes: 9000, sha256: "b".repeat(64), truncated: true },
        message_sha256: "c".repeat(64),
      }),
    );
    expect(line).toBe(
      `#7 project_context rules=AGENTS.md(120B,sha256:${"a".repeat(12)}) repo_map=300_entries(9000B,sha256:${"b".repeat(12)},truncated) untrusted=true`,
    );
    expect(eventLine(event("project_context", { rules: { path: null }, repo_map: { entries: 0, bytes: 0, sha256: "d".repeat(64) } }))).toContain("rules=none");
  });

  it("shows a command's argv, quoted for a terminal, and its exit code", () => {
    const line = eventLine(
      event(
        "tool_observed",
        {
          tool: "run_command",
          ok: true,
          error: null,
          truncated: false,
          decision: "allow",
          rule: "policy:ci:allow:go vet",
          argv: ["go", "vet", "./..."],
          exit_code: 0,
        },
        "c1",
      ),
    );
    expect(line).toBe("#7 tool_observed tool=run_command decision=allow rule=policy:ci:allow:go vet ok=true argv=go vet ./... exit_code=0 call=c1");
    expect(eventLine(event("tool_observed", { tool: "run_command", ok: true, error: null, truncated: false, argv: ["echo", "\u001b[31mred"] }))).toContain(
      "argv=echo $'\\x1b[31mred'",
    );
  });

  it("regression: an event type from a newer daemon is read and named, not a refused answer (the events schema accepted only this version's types)", () => {
    const raw = { seq: 9, type: "sandbox_snapshot", call_id: null, action_id: null, payload: { schema_version: 1, layers: 3 } };
    const parsed = TraceEvent.safeParse(raw);
    expect(parsed.success).toBe(true);
    expect(eventLine(raw)).toBe("#9 sandbox_snapshot (not readable by this client version)");
    // a known type whose payload does not fit is not guessed at either
    expect(eventLine(event("tool_observed", { tool: 7 }))).toBe("#7 tool_observed (not readable by this client version)");
  });
});
