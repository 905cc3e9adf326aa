import type { Backend, Runtime } from "../contracts/sandbox.js";
import { MiniAgentError } from "../errors.js";
import type { IsolationFacts, IsolationKey } from "./isolation-facts.js";

/**
 * The live gate (issue 6): a live model may drive the agent only when the
 * sandbox it would use has just been PROVEN by the probes. Checked in this
 * order, and by the daemon BEFORE a workspace is prepared, BEFORE the API key
 * is read and BEFORE any HTTP request:
 *   1. the backend is `container` (never trusted_local);
 *   2. the engine is reachable and the pinned image digest is present;
 *   3. the latest isolation report for the CURRENT key of the run's image family
 *      (family, image digest, HostConfig hash, engine version, runtime) passed and
 *      is younger than maxReportAgeMs: a live run in the python image needs a
 *      passing python report, whatever the node report says.
 * The gate takes no credential source and no HTTP client: it cannot touch either.
 */
export const LIVE_GATE_DEFAULTS = {
  maxReportAgeMs: 24 * 60 * 60 * 1000,
  /** a report dated further in the future than this is not trusted (clock skew or tampering) */
  futureSkewMs: 5 * 60 * 1000,
  refreshCommand: "mini-agent-client probe",
} as const;

export type GateReason = "backend_not_isolated" | "runtime_unavailable" | "image_missing" | `probe_failed:${string}` | "report_stale";

export type LiveGateResult =
  | { ok: true; key: IsolationKey; report_generated_at: string }
  | {
      ok: false;
      code: "isolation_unverified";
      reason: GateReason;
      /** one sentence a user can act on */
      message: string;
      refresh_command: typeof LIVE_GATE_DEFAULTS.refreshCommand;
    };

export interface LiveGateInput {
  backend: Backend;
  facts: IsolationFacts;
  /** the image family the run's sandbox uses; absent: the configured family */
  family?: string;
  /** the run's OCI runtime (`--runtime`); absent: the configured one. Reports are per runtime too */
  runtime?: Runtime;
  maxReportAgeMs?: number;
  /** epoch milliseconds; injected so staleness is testable without waiting */
  clock?: () => number;
}

export async function checkLiveGate(input: LiveGateInput): Promise<LiveGateResult> {
  const maxAge = input.maxReportAgeMs ?? LIVE_GATE_DEFAULTS.maxReportAgeMs;
  if (!Number.isFinite(maxAge) || maxAge <= 0) {
    throw new MiniAgentError("invalid_request", `maxReportAgeMs must be a positive number of milliseconds, got ${String(maxAge)}`);
  }
  const now = (input.clock ?? Date.now)();

  if (input.backend !== "container") {
    return refuse("backend_not_isolated", `a live model needs the container backend, not ${input.backend}`);
  }

  let current;
  try {
    current = await input.facts.currentKey(input.family, input.runtime);
  } catch {
    // fail closed: a fact we cannot establish is a fact that does not hold
    return refuse("runtime_unavailable", "the container engine could not be queried");
  }
  if (!current.ok) return refuse(current.reason, current.detail);
  // fail closed: a key of another family proves nothing about this run's sandbox
  if (input.family !== undefined && current.key.image_family !== input.family) {
    return refuse("image_missing", `the sandbox facts describe family ${current.key.image_family}, not ${input.family}`);
  }
  // fail closed: a report proven under another runtime says nothing about this run's sandbox
  if (input.runtime !== undefined && current.key.runtime !== input.runtime) {
    return refuse("runtime_unavailable", `the sandbox facts describe runtime ${current.key.runtime}, not ${input.runtime}`);
  }

  let report;
  try {
    report = await input.facts.latestReport(current.key);
  } catch {
    return refuse("report_stale", "the isolation report for the current sandbox could not be read");
  }
  if (report === null) {
    return refuse(
      "report_stale",
      `no isolation report exists for the current ${current.key.image_family} image, sandbox config, engine and runtime (${current.key.runtime})`,
    );
  }
  if (!report.passed) {
    const failed = report.failed_probe_ids[0] ?? "unknown";
    return refuse(`probe_failed:${failed}`, `the latest isolation report failed ${report.failed_probe_ids.length || 1} probe(s), first: ${failed}`);
  }
  const generated = Date.parse(report.generated_at);
  if (!Number.isFinite(generated)) return refuse("report_stale", "the isolation report has no readable date");
  if (generated - now > LIVE_GATE_DEFAULTS.futureSkewMs) return refuse("report_stale", "the isolation report is dated in the future");
  const age = now - generated;
  if (age > maxAge) {
    return refuse("report_stale", `the isolation report is ${formatAge(age)} old; at most ${formatAge(maxAge)} is accepted`);
  }
  return { ok: true, key: current.key, report_generated_at: report.generated_at };
}

/** The same verdict as an error, for callers that stop on refusal (the daemon's createRun). */
export async function assertLiveGate(input: LiveGateInput): Promise<Extract<LiveGateResult, { ok: true }>> {
  const result = await checkLiveGate(input);
  if (!result.ok) throw gateRefusal(result);
  return result;
}

export function gateRefusal(result: Extract<LiveGateResult, { ok: false }>): MiniAgentError {
  return new MiniAgentError("isolation_unverified", `isolation unverified (${result.reason}): ${result.message}; refresh with \`${result.refresh_command}\``, {
    details: { reason: result.reason, refresh_command: result.refresh_command },
  });
}

function refuse(reason: GateReason, message: string): LiveGateResult {
  return { ok: false, code: "isolation_unverified", reason, message, refresh_command: LIVE_GATE_DEFAULTS.refreshCommand };
}

function formatAge(ms: number): string {
  const minutes = Math.round(ms / 60_000);
  return minutes < 120 ? `${minutes} min` : `${Math.round(minutes / 60)} h`;
}
