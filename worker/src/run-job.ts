import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { ApiClient } from "../../client-lib/index.js";
import { CaseInterrupted, errorResult, loadCase, OUTPUT_DIRS, resolveInside, runCase, unpackCase } from "../../eval/src/index.js";
import { describeZodError } from "../../daemon/src/contracts/common.js";
import type { CaseResult, WorkerIdentity } from "../../daemon/src/contracts/eval-report.js";
import { FLEET_RESULT_LIMITS, FleetJob, type FleetResult } from "../../daemon/src/contracts/fleet.js";
import type { Runtime } from "../../daemon/src/contracts/sandbox.js";
import { isMiniAgentError, MiniAgentError } from "../../daemon/src/errors.js";

/** What a job needs from the worker around it; each is a side effect a test can replace. */
export interface JobDeps {
  api: Pick<ApiClient, "createRun" | "events" | "getRun" | "cancel" | "diff" | "traceFile">;
  /** where each attempt's case and workspace go: outside the daemon's state dir (the daemon refuses a case inside it) */
  workDir: string;
  /** the OCI runtime of this worker's daemon: every case it takes runs under it (one queue per runtime) */
  runtime: Runtime;
  /** this worker's facts now (from its daemon's health and isolation report) */
  identity(): Promise<WorkerIdentity>;
  /** the isolation verdict of a family on THIS machine, as the daemon's health gives it */
  familyVerdict(family: string): Promise<{ verdict: string; reason: string | null }>;
  /** true once the eval run was cancelled (Redis key set by `eval cancel` / Ctrl-C) */
  cancelled(suiteRun: string): Promise<boolean>;
  now(): number;
}

/** A job that must not be retried: its payload is bad, so another worker would fail the same way. */
export class JobRefused extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const CANCEL_POLL_MS = 1000;

/**
 * One case of an eval fleet on this worker: the payload is checked (schema,
 * SHA-256, case version) before use, unpacked into a folder of this attempt
 * alone, and run through this worker's own daemon exactly as a local
 * `eval run` runs it (run-case.ts: same API, same policy profile, same
 * Verifier, a fresh workspace). A live-model case is taken only when this
 * machine's isolation report for the case's family is fresh and passing;
 * otherwise the result says why. A case that fails by its own verdict is a
 * RESULT, never an error: BullMQ must not retry it.
 */
export async function runJob(raw: unknown, attempt: number, deps: JobDeps): Promise<FleetResult> {
  const parsed = FleetJob.safeParse(raw);
  if (!parsed.success) throw new JobRefused("invalid_request", `the job is not a mini-agent eval case:\n${describeZodError(parsed.error)}`);
  const job = parsed.data;
  const worker = await deps.identity();
  const started = deps.now();
  fs.mkdirSync(deps.workDir, { recursive: true, mode: 0o700 });
  const dir = inside(deps.workDir, `${job.case_id}.${attempt}.${randomBytes(4).toString("hex")}`);
  fs.mkdirSync(dir, { mode: 0o700 });
  try {
    fs.mkdirSync(path.join(dir, "case"), { mode: 0o700 });
    const caseDir = inside(dir, "case", job.case_id);
    try {
      await unpackCase(Buffer.from(job.tar_base64, "base64"), job.tar_sha256, caseDir);
    } catch (err) {
      if (isMiniAgentError(err)) throw new JobRefused(err.code, err.message);
      throw err;
    }
    const c = await loadCase(caseDir).catch((err: unknown) => {
      throw isMiniAgentError(err) ? new JobRefused(err.code, err.message) : err;
    });
    if (c.hash !== job.case_hash)
      throw new JobRefused("case_payload_mismatch", `the unpacked case has version ${c.hash}, the job names ${job.case_hash}; it was not run`);

    if (job.model === "live") {
      // the live gate's question, asked before any run exists; the daemon asks it again at create
      const v = await deps.familyVerdict(job.family);
      if (v.verdict !== "passed")
        return pack(
          errorResult(
            c,
            attempt,
            deps.now() - started,
            `worker ${worker.worker_id} on ${worker.hostname} refused the live-model case: its isolation report for the ${job.family} image is ${v.verdict}${v.reason ? ` (${v.reason})` : ""}; run \`mini-agent-client probe --family ${job.family}\` against that worker's state dir`,
          ),
          worker,
          "",
          "",
        );
    }

    const output = inside(dir, "out");
    for (const d of OUTPUT_DIRS) fs.mkdirSync(path.join(output, d), { recursive: true });
    let runId: string | null = null;
    let stop = false;
    const watch = (async () => {
      while (!stop) {
        await new Promise((r) => setTimeout(r, CANCEL_POLL_MS));
        if (stop || runId === null) continue;
        if (await deps.cancelled(job.suite_run).catch(() => false)) {
          await deps.api.cancel(runId).catch(() => undefined);
          return;
        }
      }
    })();
    let result: CaseResult;
    try {
      result = await runCase(c, attempt, {
        api: deps.api,
        output,
        model: job.model,
        profile: job.profile,
        // the worker's daemon runs every case under the worker's runtime (a queue per runtime)
        daemonRuntime: deps.runtime,
        now: deps.now,
        onStarted: (_id, id) => {
          runId = id;
        },
      });
    } catch (err) {
      // this worker's own daemon went away under the case: an infrastructure failure, not a verdict
      if (err instanceof CaseInterrupted) throw new MiniAgentError("daemon_unreachable", `worker ${worker.worker_id}: ${err.why}`);
      result = errorResult(c, attempt, deps.now() - started, isMiniAgentError(err) ? `${err.code}: ${err.message}` : String((err as Error)?.message ?? err));
    } finally {
      stop = true;
      await watch;
    }
    const read = (rel: string | null) => (rel === null ? "" : readOr(path.join(output, rel)));
    return pack(result, worker, read(result.trace_file), read(result.diff_file));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The schema already refuses a case id that could step out; this is the check after resolution (links followed), failed terminally like any bad payload. */
function inside(root: string, ...parts: string[]): string {
  try {
    return resolveInside(root, ...parts);
  } catch (err) {
    if (isMiniAgentError(err)) throw new JobRefused(err.code, err.message);
    throw err;
  }
}

function readOr(file: string): string {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return "";
  }
}

/** Cuts at a line end below the cap, so a bounded trace is still a valid trace file (whole lines). */
export function bound(text: string, maxBytes: number): { text: string; truncated: boolean } {
  if (Buffer.byteLength(text) <= maxBytes) return { text, truncated: false };
  const cut = Buffer.from(text).subarray(0, maxBytes).toString("utf8");
  const end = cut.lastIndexOf("\n");
  return { text: end >= 0 ? cut.slice(0, end + 1) : "", truncated: true };
}

function pack(result: CaseResult, worker: WorkerIdentity, trace: string, diff: string): FleetResult {
  const t = bound(trace, FLEET_RESULT_LIMITS.traceBytes);
  // a string's max is in characters: bound by bytes leaves it within both
  const d = bound(diff, FLEET_RESULT_LIMITS.diffBytes);
  return { schema_version: 1, result, worker, trace: t.text, trace_truncated: t.truncated, diff: d.text, diff_truncated: d.truncated };
}
