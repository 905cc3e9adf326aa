import type { ParsedTraceFile, TornLine } from "../../daemon/src/contracts/trace-file.js";
import { readTraceEvent, type TracePayload, type TypedTraceEvent } from "../../daemon/src/contracts/trace-event.js";
import { nearestRank } from "./report-aggregate.js";

/**
 * Operational metrics over a set of run trace files (issue 13, "the seed's
 * list"): recurring error codes, approval wait time, output truncation rate,
 * Verifier rejections, uncertain recoveries. Pure: the command reads the files
 * (metrics-read.ts), this only counts what they say.
 */
export interface TraceInput {
  /** the file's name, e.g. `run-1.jsonl`; the run is named after it */
  file: string;
  parsed: ParsedTraceFile;
}

export interface Count<K extends string = string> {
  key: K;
  count: number;
  /** how many runs it happened in */
  runs: number;
}

export interface Metrics {
  runs_read: number;
  /** files whose last line a crash cut short: the line is left out, never counted */
  torn: Array<{ file: string; line: number; bytes: number; why: TornLine["why"] }>;
  /** files that are not trace files (no valid event, unreadable): skipped */
  skipped: Array<{ file: string; why: string }>;
  /**
   * valid lines whose event type or payload this version does not know (a newer
   * daemon's event, or one written before a field was named): left out, never guessed at
   */
  unreadable: Array<{ file: string; seq: number; type: string }>;
  /** most frequent first; `tool:<code>` from tool_observed, `stop:<reason>` from runs that did not complete, `verifier:<reason>` */
  error_codes: Count[];
  approvals: {
    requested: number;
    by_person: number;
    by_policy: number;
    /** approvals the daemon refused (stale, denied) */
    refused: number;
    /** asked and never answered in these files */
    unanswered: number;
    /** approval_requested -> approval_recorded for the same action; a policy approval has no wait (it is never requested) */
    wait_ms: { count: number; p50: number; p95: number; max: number } | null;
  };
  truncation: { observations: number; truncated: number; rate: number };
  verifier: { rejections: number; reasons: Count[] };
  uncertain: {
    /** runs that ended `uncertain`: a write recovery could not prove (the path it named) */
    ended_uncertain: Array<{ run: string; path: string | null }>;
    /** runs resumed at least once (each resume runs the three-state recovery) */
    resumed_runs: number;
    resumes: number;
    /** writes whose receipt recovery recorded after a crash (the file already held the approved bytes) */
    recovered_writes: number;
  };
}

export function computeMetrics(inputs: TraceInput[], skipped: Metrics["skipped"] = []): Metrics {
  const errors = new Tally();
  const verifierReasons = new Tally();
  const waits: number[] = [];
  const approvals = { requested: 0, by_person: 0, by_policy: 0, refused: 0, unanswered: 0 };
  const truncation = { observations: 0, truncated: 0 };
  const uncertain: Metrics["uncertain"] = { ended_uncertain: [], resumed_runs: 0, resumes: 0, recovered_writes: 0 };
  const torn: Metrics["torn"] = [];
  const unreadable: Metrics["unreadable"] = [];
  let runsRead = 0;
  let rejections = 0;

  for (const { file, parsed } of inputs) {
    // a torn line (a crash cut it; the daemon went on after it) is reported and never counted
    for (const t of parsed.torn) torn.push({ file, line: t.line, bytes: t.bytes, why: t.why });
    if (parsed.events.length === 0) continue;
    runsRead += 1;
    const run = file.replace(/\.jsonl$/, "");
    const asked = new Map<string, number>();
    let resumed = 0;
    for (const line of parsed.events) {
      // parsed by its type's schema (contracts/trace-event.ts), as every other reader does
      const e = readTraceEvent(line);
      if (e === null) {
        unreadable.push({ file, seq: line.seq, type: line.type });
        continue;
      }
      switch (e.type) {
        case "tool_observed":
          truncation.observations += 1;
          if (e.payload.truncated) truncation.truncated += 1;
          if (e.payload.error !== null) errors.add(`tool:${e.payload.error}`, run);
          break;
        case "run_stopped": {
          const p = e.payload;
          // the uncertain write's path is a field this version's schema does not name: read as data
          if (p.status === "uncertain") uncertain.ended_uncertain.push({ run, path: typeof p.path === "string" ? p.path : null });
          if (p.status !== "completed") errors.add(`stop:${stopCode(p)}`, run);
          break;
        }
        case "verification_failed": {
          rejections += 1;
          const reason = e.payload.reason ?? "unknown";
          verifierReasons.add(reason, run);
          errors.add(`verifier:${reason}`, run);
          break;
        }
        case "approval_requested":
          approvals.requested += 1;
          if (e.action_id !== null) asked.set(e.action_id, line.at);
          break;
        case "approval_recorded":
          recordApproval(e, line.at, asked, approvals, waits);
          break;
        case "run_resumed":
          resumed += 1;
          break;
        case "action_receipt":
          if (e.payload.source === "recovered") uncertain.recovered_writes += 1;
          break;
        default:
          break;
      }
    }
    approvals.unanswered += asked.size;
    if (resumed > 0) uncertain.resumed_runs += 1;
    uncertain.resumes += resumed;
  }

  return {
    runs_read: runsRead,
    torn,
    skipped,
    unreadable,
    error_codes: errors.sorted(),
    approvals: { ...approvals, wait_ms: waitSpread(waits) },
    truncation: { ...truncation, rate: truncation.observations === 0 ? 0 : truncation.truncated / truncation.observations },
    verifier: { rejections, reasons: verifierReasons.sorted() },
    uncertain,
  };
}

function recordApproval(
  e: Extract<TypedTraceEvent, { type: "approval_recorded" }>,
  at: number,
  asked: Map<string, number>,
  a: Omit<Metrics["approvals"], "wait_ms">,
  waits: number[],
): void {
  const p = e.payload;
  const by = p.by ?? null;
  // a stale or denied answer was the daemon's refusal, whoever gave it
  if (p.decision === "stale" || p.decision === "denied") a.refused += 1;
  else if (by?.startsWith("policy:")) a.by_policy += 1;
  else a.by_person += 1;
  if (e.action_id === null) return;
  const askedAt = asked.get(e.action_id);
  if (askedAt === undefined) return;
  asked.delete(e.action_id);
  waits.push(Math.max(0, at - askedAt));
}

/** A stop's reason without its free text ("model_error: <message>" -> "model_error"), so the same cause counts once. */
function stopCode(p: TracePayload<"run_stopped">): string {
  const reason = p.reason ?? p.status;
  return (reason.split(": ")[0] as string).slice(0, 80);
}

class Tally {
  private readonly counts = new Map<string, { count: number; runs: Set<string> }>();
  add(key: string, run: string): void {
    const c = this.counts.get(key) ?? { count: 0, runs: new Set<string>() };
    c.count += 1;
    c.runs.add(run);
    this.counts.set(key, c);
  }
  sorted(): Count[] {
    return [...this.counts.entries()]
      .map(([key, c]) => ({ key, count: c.count, runs: c.runs.size }))
      .sort((x, y) => y.count - x.count || y.runs - x.runs || x.key.localeCompare(y.key));
  }
}

/** approval waits: the same nearest-rank quantiles as the report's aggregates, plus count and max */
function waitSpread(xs: number[]): Metrics["approvals"]["wait_ms"] {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  return { count: s.length, p50: nearestRank(s, 0.5), p95: nearestRank(s, 0.95), max: s[s.length - 1] as number };
}
