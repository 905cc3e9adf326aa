import fs from "node:fs";
import { type ApiClient, verdictLines } from "../../client-lib/index.js";
import type { CaseResult } from "../../daemon/src/contracts/eval-report.js";
import type { RunStatus } from "../../daemon/src/contracts/run.js";
import type { RunView, TraceEvent } from "../../daemon/src/contracts/run-view.js";
import type { Runtime } from "../../daemon/src/contracts/sandbox.js";
import { parseTraceFile } from "../../daemon/src/contracts/trace-file.js";
import { isMiniAgentError, MiniAgentError } from "../../daemon/src/errors.js";
import type { LoadedCase } from "./case-load.js";
import { judgeCase, observeRun, verdictOf } from "./judge.js";
import { caseFile, markStarted, workspacePath, writeAtomic } from "./run-state.js";

/** What a case run needs besides the case: the daemon, the settings, the output folder and a clock. */
export interface CaseRunContext {
  api: Pick<ApiClient, "createRun" | "events" | "getRun" | "cancel" | "diff" | "traceFile">;
  output: string;
  model: "replay" | "live";
  profile: "interactive" | "ci" | "eval";
  /** `--runtime`: passed to every case's createRun; absent: the daemon's runtime */
  runtime?: Runtime;
  /** the daemon's own runtime: what a case ran under when the run names none */
  daemonRuntime: Runtime;
  now(): number;
  /** `--max-workspace-bytes/-files`: passed to every case's createRun; absent: the daemon's limits */
  maxWorkspaceBytes?: number;
  maxWorkspaceFiles?: number;
  /** told the run id once the daemon accepted the case (the progress display shows it) */
  onStarted?(id: string, runId: string): void;
}

/**
 * The case could not finish in this invocation and must NOT get a result:
 * the daemon went away, or restarted under the run (interrupted). The next
 * invocation re-runs it from a fresh workspace, attempts + 1.
 */
export class CaseInterrupted extends Error {
  constructor(
    readonly caseId: string,
    readonly why: string,
  ) {
    super(`${caseId}: ${why}`);
  }
}

/** Ends that need nothing more from anyone: judge them. */
const ENDED: readonly RunStatus[] = ["completed", "failed", "cancelled", "uncertain", "budget_exhausted"];
const LONG_POLL_MS = 20_000;

/**
 * One case in its own fresh workspace through the daemon; unattended: a run
 * that stops for a person's answer is cancelled at once and is `needs_human`.
 * Writes traces/<id>.jsonl and diffs/<id>.diff, and returns the CaseResult
 * (the caller writes it). The workspace is removed once judged.
 */
export async function runCase(c: LoadedCase, attempt: number, ctx: CaseRunContext): Promise<CaseResult> {
  const started = ctx.now();
  const workspace = workspacePath(ctx.output, c.id, attempt);
  // a leftover of a crashed attempt with the same number (the started record is written after the daemon accepted)
  fs.rmSync(workspace, { recursive: true, force: true });
  markStarted(ctx.output, c.id, { attempts: attempt, run_id: null, hash: c.hash });
  try {
    let view: RunView;
    try {
      view = (
        await ctx.api.createRun({
          workspace,
          fixture_dir: c.dir,
          model: ctx.model,
          backend: "container",
          policy_profile: ctx.profile,
          ...(ctx.runtime !== undefined && { runtime: ctx.runtime }),
          ...(ctx.maxWorkspaceBytes !== undefined && { max_workspace_bytes: ctx.maxWorkspaceBytes }),
          ...(ctx.maxWorkspaceFiles !== undefined && { max_workspace_files: ctx.maxWorkspaceFiles }),
        })
      ).run;
    } catch (err) {
      if (isMiniAgentError(err) && err.code === "daemon_unreachable") throw new CaseInterrupted(c.id, "the daemon is unreachable");
      if (isMiniAgentError(err)) return errorResult(c, attempt, ctx.now() - started, `the daemon refused the case: ${err.code}: ${err.message}`);
      throw err;
    }
    markStarted(ctx.output, c.id, { attempts: attempt, run_id: view.run_id, hash: c.hash });
    ctx.onStarted?.(c.id, view.run_id);
    return await followAndJudge(c, attempt, view, started, ctx);
  } finally {
    fs.rmSync(workspace, { recursive: true, force: true });
  }
}

async function followAndJudge(c: LoadedCase, attempt: number, first: RunView, started: number, ctx: CaseRunContext): Promise<CaseResult> {
  const runId = first.run_id;
  const guard = async <T>(f: () => Promise<T>): Promise<T> => {
    try {
      return await f();
    } catch (err) {
      if (isMiniAgentError(err) && err.code === "daemon_unreachable") throw new CaseInterrupted(c.id, "the daemon became unreachable");
      throw err;
    }
  };
  let view = first;
  let since = first.last_seq;
  let needsHuman = false;
  for (;;) {
    if (view.status === "awaiting_approval") {
      // nobody answers in an eval: cancel now, never leave it waiting
      needsHuman = true;
      view = (await guard(() => ctx.api.cancel(runId))).run;
      break;
    }
    if (ENDED.includes(view.status)) break;
    if (view.status === "interrupted") throw new CaseInterrupted(c.id, "the daemon restarted under the run");
    const page = await guard(() => ctx.api.events(runId, since, LONG_POLL_MS));
    view = page.run;
    since = Math.max(since, ...page.events.map((e) => e.seq));
  }
  const wallMs = ctx.now() - started;
  const traceText = await guard(() => fetchTrace(ctx.api, runId));
  const diff = (await guard(() => ctx.api.diff(runId))).diff;
  writeAtomic(caseFile(ctx.output, "traces", `${c.id}.jsonl`), traceText);
  writeAtomic(caseFile(ctx.output, "diffs", `${c.id}.diff`), diff);
  const events = parseTraceLines(traceText);
  const o = observeRun(view, events);
  const rules = judgeCase(c.expect, o);
  return {
    id: c.id,
    hash: c.hash,
    verdict: verdictOf(rules, needsHuman),
    expected_status: c.expect.status,
    status: view.status,
    reason: view.reason,
    rules,
    ...(view.verification && { why: verdictLines(view) }),
    run_id: runId,
    runtime: view.runtime ?? ctx.daemonRuntime,
    tool_calls: o.tool_calls,
    turns: o.turns,
    tokens: o.tokens,
    wall_ms: Math.max(0, Math.round(wallMs)),
    prompts_by_policy: o.prompts_by_policy,
    uncertain: o.uncertain,
    verifier_rejections: o.verifier_rejections,
    protocol_errors: o.protocol_errors,
    expected_protocol_errors: c.expect.require?.protocol_errors ?? 0,
    attempts: attempt,
    trace_file: `traces/${c.id}.jsonl`,
    diff_file: `diffs/${c.id}.diff`,
    error: null,
    // SWE-bench's own report shape, so the field's tools can read each case
    ...(view.swebench && { swebench: view.swebench }),
  };
}

/**
 * The run's own trace file (`<state-dir>/traces/<run_id>.jsonl` through the
 * API): the events as `trace RUN --jsonl` has them plus times and the model's
 * text and observations, which is what the output folder keeps.
 */
export async function fetchTrace(api: Pick<ApiClient, "traceFile">, runId: string): Promise<string> {
  return api.traceFile(runId);
}

/**
 * The events of a trace file. A torn line (a daemon crash cut it) is never an
 * event; the daemon writes the ledger's events a torn file lacks when it next
 * appends, so what is left is complete. A damaged file is refused loudly: a
 * judge over a partial trace would be wrong silently.
 */
export function parseTraceLines(text: string): TraceEvent[] {
  try {
    return parseTraceFile(text).events;
  } catch (err) {
    throw new MiniAgentError("internal", `the run's trace file is damaged: ${(err as Error).message}`);
  }
}

export function errorResult(c: LoadedCase, attempt: number, wallMs: number, error: string): CaseResult {
  return {
    id: c.id,
    hash: c.hash,
    verdict: "error",
    expected_status: c.expect.status,
    status: null,
    reason: null,
    rules: [],
    run_id: null,
    tool_calls: 0,
    turns: 0,
    tokens: { prompt: 0, completion: 0 },
    wall_ms: Math.max(0, Math.round(wallMs)),
    prompts_by_policy: 0,
    uncertain: 0,
    verifier_rejections: 0,
    protocol_errors: 0,
    expected_protocol_errors: c.expect.require?.protocol_errors ?? 0,
    attempts: attempt,
    trace_file: null,
    diff_file: null,
    error: error.slice(0, 4096),
  };
}
