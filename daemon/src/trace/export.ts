import { redactDeep } from "../redact/index.js";
import type { TraceEvent } from "../runtime/service.js";

/**
 * Canonical JSONL: one event per line, the same bytes for the same run on any
 * machine. Host paths become placeholders and wall-clock figures are dropped.
 * Action ids stay: they name the run (issue 10 item 4) and are what an audit
 * matches against approvals, so two runs of one replay differ only in them.
 * Payloads were redacted when
 * they were stored; they pass the current rule set (redact/) again on the way
 * out, so a ledger written under older rules exports nothing they now catch.
 */
const NOISE_KEYS = new Set(["at", "duration_ms", "elapsed_ms", "started_at", "finished_at", "timestamp", "created_at", "time"]);

export interface PathPlaceholders {
  workspace: string;
  controlDir: string;
  stateDir: string;
}

export function exportJsonl(events: TraceEvent[], paths: PathPlaceholders): string {
  const canonical = canonicalEvent(paths);
  return events.map((e) => JSON.stringify(canonical(e)) + "\n").join("");
}

/**
 * One event as the export prints it (the trace file's lines start from this
 * too, so the two can never disagree): host paths as placeholders, wall-clock
 * figures dropped, the payload through the current rule set again.
 */
export function canonicalEvent(paths: PathPlaceholders): (e: TraceEvent) => TraceEvent {
  // longest first, so a workspace inside the state dir becomes <workspace>, not <state>/...
  const subs = (
    [
      [paths.workspace, "<workspace>"],
      [paths.controlDir, "<control>"],
      [paths.stateDir, "<state>"],
    ] as Array<[string, string]>
  )
    .filter(([p]) => p.length > 1)
    .sort((a, b) => b[0].length - a[0].length);
  const clean = (v: unknown): unknown => {
    if (typeof v === "string") return subs.reduce((s, [p, r]) => s.split(p).join(r), v);
    if (Array.isArray(v)) return v.map(clean);
    if (v !== null && typeof v === "object") {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) if (!NOISE_KEYS.has(k)) out[k] = clean(x);
      return out;
    }
    return v;
  };
  return (e) => ({ seq: e.seq, type: e.type, call_id: e.call_id, action_id: e.action_id, payload: clean(redactDeep(e.payload)) as Record<string, unknown> });
}
