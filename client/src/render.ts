import type { z } from "zod";
import type { RunViewSchema, TraceEventSchema } from "../../daemon/src/contracts/api.js";

type RunView = z.infer<typeof RunViewSchema>;
type TraceEvent = z.infer<typeof TraceEventSchema>;

/** Text shapes of the client, kept apart from the flow so each stays short. */
export function progressLine(run: RunView): string {
  const t = run.tests ? `tests ${run.tests.passed}/${run.tests.discovered} passed` : "tests -";
  const secs = (run.counters.elapsed_ms / 1000).toFixed(1);
  return `${run.run_id}  ${run.status}  turn ${run.counters.model_turns}  last tool ${run.last_tool ?? "-"}  ${t}  ${secs}s`;
}

function str(v: unknown): string | null {
  return typeof v === "string" || typeof v === "number" || typeof v === "boolean" ? String(v) : null;
}

/** One plain line per event: seq, type, and the few payload fields a reader wants. */
export function eventLine(e: TraceEvent): string {
  const parts = [`#${e.seq}`, e.type];
  const p = e.payload;
  for (const key of ["name", "tool", "path", "preset", "status", "reason", "decision", "discovered", "passed", "failed", "ok", "code"]) {
    const v = str(p[key]);
    if (v !== null) parts.push(`${key}=${v.length > 80 ? v.slice(0, 77) + "..." : v}`);
  }
  if (e.call_id) parts.push(`call=${e.call_id}`);
  if (e.action_id) parts.push(`action=${e.action_id}`);
  return parts.join(" ");
}

export function pendingActionText(run: RunView): string {
  const a = run.pending_action;
  if (!a) return "";
  return [
    `approval needed for run ${run.run_id}`,
    `  action: ${a.action_id}`,
    `  tool:   ${a.tool}`,
    `  path:   ${a.path}`,
    `  why:    ${a.why ?? "(the model gave no reason)"}`,
    "",
    a.diff.endsWith("\n") ? a.diff : a.diff + "\n",
  ].join("\n");
}

/** Quotes an argument for a POSIX shell only when it needs it, so printed commands can be pasted. */
export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_./:=@+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

export function finalText(run: RunView): string {
  switch (run.status) {
    case "completed": {
      const v = run.verification;
      const tests = v ? `tests ${v.tests.passed}/${v.tests.discovered} passed` : "";
      const acc = v?.acceptance ? `, acceptance ${v.acceptance.passed.length}/${v.acceptance.passed.length + v.acceptance.failed.length} cases passed` : "";
      return `completed: verified by the host Verifier (${tests}${acc}); ${run.counters.writes} write(s)`;
    }
    case "failed":
      return `failed: ${run.reason ?? "no reason recorded"}`;
    case "cancelled":
      return `cancelled${run.reason ? `: ${run.reason}` : ""}`;
    case "budget_exhausted":
      return `budget exhausted${run.reason ? `: ${run.reason}` : ""}; continue with: mini-agent-client resume ${run.run_id}`;
    case "interrupted":
      return `interrupted${run.reason ? `: ${run.reason}` : ""}; continue with: mini-agent-client resume ${run.run_id}`;
    case "uncertain":
      return `uncertain: ${run.reason ?? "a write may or may not have happened"}; inspect with: mini-agent-client diff ${run.run_id}`;
    default:
      return `${run.status}${run.reason ? `: ${run.reason}` : ""}`;
  }
}

/** The machine-readable status (`status --json` and every --json command that ends at a run). */
export function statusJson(run: RunView): Record<string, unknown> {
  return {
    run_id: run.run_id,
    status: run.status,
    reason: run.reason,
    workspace: run.workspace,
    model: run.model,
    backend: run.backend,
    action_id: run.status === "awaiting_approval" ? (run.pending_action?.action_id ?? null) : null,
    pending_action: run.status === "awaiting_approval" ? run.pending_action : null,
    counters: run.counters,
    tests: run.tests,
    verification: run.verification,
    last_seq: run.last_seq,
  };
}
