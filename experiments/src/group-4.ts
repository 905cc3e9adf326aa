import fs from "node:fs/promises";
import path from "node:path";
import { ChatMessage, callIds, groupMessages, isCompleteGroup, isFailureGroup } from "../../daemon/src/context/messages.js";
import { defaultToolPort } from "../../daemon/src/runtime/tools-port.js";
import { fullModelView, ledgerMessages } from "../../daemon/src/runtime/view-input.js";
import { createDockerClient } from "../../daemon/src/sandbox/docker-client.js";
import { runIsolationProbes } from "../../probes/run.js";
import { countEvents, manifestDigest, observedFor, runReplay, startService, withService } from "./harness.js";
import { sameJson } from "./canonical.js";
import type { GroupDefinition, Json } from "./types.js";

/**
 * Group 4, boundaries kept apart: the model's context, the workspace's edge,
 * the run's stop reasons and the container's isolation are separate claims,
 * each measured on its own.
 */
const BUDGET = 1800;
/** a budget no run of the fixture comes near: the view then keeps every group untrimmed */
const UNBOUNDED = 1_000_000;

/** Every key the scenario expects has the expected value; the other observed keys are measurements, recorded as they are. */
function expectedFactsEqual(observed: Json, expected: Json): boolean {
  if (observed === null || typeof observed !== "object" || Array.isArray(observed)) return false;
  if (expected === null || typeof expected !== "object" || Array.isArray(expected)) return false;
  return Object.entries(expected).every(([k, v]) => k in observed && sameJson(observed[k], v));
}

export const group4: GroupDefinition = {
  id: "group-4",
  title: "boundaries kept apart",
  scenarios: [
    {
      id: "context_under_budget",
      title: "the model view of a finished canonical run, rebuilt from the ledger under an 1800-byte budget",
      runsWithoutEngine: true,
      expected: {
        budget_bytes: BUDGET,
        within_budget: true,
        goal_kept: true,
        workspace_digest_kept: true,
        status_kept: true,
        counters_kept: true,
        pairs_intact: true,
        compaction_marker: true,
      },
      criterion:
        "every expected fact equals the observed one: the serialized messages (JSON.stringify of the view's messages, UTF-8) are <= 1800 bytes; the first (system) message carries the task text, the workspace digest, the run status and the counters; every tool_call_id in the view has its assistant tool_call and vice versa; a history_compaction marker says what was dropped. The numbers (view_bytes; uncompacted_bytes, the same view with room for everything; groups kept and dropped; dropped and trimmed call ids; the summary level, 0 full to 3 tightest; the most recent failed call and whether it still fit) are recorded as measured, not compared with a figure written by hand",
      does_not_prove:
        "that a model decides well from a compacted view (at this budget the most recent failure no longer fits and is named only in the marker), or token counts for any tokenizer (the budget is bytes). The byte counts are those of mini-agent's own serialisation (JSON.stringify of its chat messages, a summary in `key: value` lines, its own marker text); the design's figure for its own serialisation (1800 -> 1592 bytes) counts other field names, other framing and other escaping of the same facts, so the two numbers are not comparable: neither says which keeps more of the run. Only 'under this budget, in this serialisation, these facts survived' is claimed. The run's clock is injected and stands still (elapsed_ms=0), so the counters have the same digits every run; a run with a real clock has a view a few bytes longer",
      async run(ctx) {
        // the summary prints the counters, elapsed_ms among them: a clock that stands still gives it the same digits every run
        const svc = startService(ctx, { clock: { now: () => 0 } });
        try {
          const out = await runReplay(svc, ctx, { approve: true });
          const run = svc.ledger.getRun(out.runId);
          const digest = await manifestDigest(out.workspace);
          const { compaction, ...view } = fullModelView(svc.ledger, out.runId, digest, BUDGET);
          // the same view with room for everything: what compaction had to fit into the budget
          const uncompacted = fullModelView(svc.ledger, out.runId, digest, UNBOUNDED).compaction;
          const messages = view.messages.map((m) => ChatMessage.parse(m));
          const first = messages[0];
          const head = first?.role === "system" ? first.content : "";
          const { asked, answered } = callIds(messages);
          const counters = run.state.counters;
          const failures = groupMessages(ledgerMessages(svc.ledger, out.runId)).groups.filter((g) => isCompleteGroup(g) && isFailureGroup(g));
          const lastFailure = failures.length > 0 ? (callIds(failures.at(-1)!.messages).asked[0] ?? null) : null;
          const viewBytes = Buffer.byteLength(JSON.stringify(view.messages));
          return {
            budget_bytes: compaction.budget_bytes,
            view_bytes: viewBytes,
            uncompacted_bytes: uncompacted.used_bytes,
            groups: { kept: compaction.kept_groups, dropped: compaction.dropped_groups, unanswered_left_out: compaction.incomplete_dropped },
            dropped_call_ids: compaction.dropped_call_ids,
            trimmed_call_ids: compaction.trimmed_call_ids,
            summary_level: compaction.summary_level,
            // the summary's facts are pinned at every level (the *_kept facts below); the last failure only while it fits
            pinned: { last_failure_call_id: lastFailure, last_failure_kept: lastFailure !== null && compaction.pinned_failure && asked.includes(lastFailure) },
            within_budget: viewBytes <= BUDGET && viewBytes === compaction.used_bytes,
            goal_kept: head.includes(run.record.task.task),
            workspace_digest_kept: head.includes(digest),
            status_kept: head.includes(`status: ${run.status}`),
            counters_kept:
              head.includes(`model_turns=${counters.model_turns}`) &&
              head.includes(`tool_calls=${counters.tool_calls}`) &&
              head.includes(`writes=${counters.writes}`),
            pairs_intact: asked.length === answered.length && asked.every((id) => answered.includes(id)),
            compaction_marker: messages.some((m) => m.role === "system" && m.content.startsWith("history_compaction:")),
          };
        } finally {
          await svc.shutdown();
        }
      },
      check: expectedFactsEqual,
    },
    {
      id: "path_escape_denied",
      title: "read_file ../outside.txt is refused at the workspace edge",
      runsWithoutEngine: true,
      expected: { code: "path_denied", outside_content_in_trace: false, writes: 0 },
      criterion: "the call's observation has code path_denied, the content of the file next to the workspace appears nowhere in the trace, nothing was written",
      does_not_prove: "that every escape (symlinks, hard links, device names) is refused; the workspace tests cover those one by one",
      async run(ctx) {
        const marker = "OUTSIDE-THE-WORKSPACE-7f3a";
        await fs.writeFile(path.join(ctx.scratch, "outside.txt"), `${marker}\n`);
        return withService(ctx, async (svc) => {
          const out = await runReplay(svc, ctx, { replay: "replays/path-escape.json", approve: false });
          return {
            code: observedFor(out.events, "call_01_escape")?.error ?? null,
            outside_content_in_trace: svc.traceJsonl(out.runId).includes(marker),
            writes: countEvents(out.events, "action_written"),
          };
        });
      },
    },
    {
      id: "cancel_and_timeout",
      title: "cancel arrives while the deadline has also passed: both facts kept, primary status cancelled",
      runsWithoutEngine: true,
      expected: { status: "cancelled", cancelled: true, deadline_passed: true },
      criterion:
        "during a tool call the (injected) clock passes total_seconds and the user cancels; the run stops with status cancelled and the run_stopped event records cancelled=true together with the exhausted deadline",
      does_not_prove: "how quickly a cancel reaches a running container; the clock is injected so the order of facts is fixed",
      async run(ctx) {
        let t = 0;
        const clock = { now: () => t };
        const real = defaultToolPort();
        let runId: string | null = null;
        let cancelling: Promise<unknown> | null = null;
        const svc = startService(ctx, {
          clock,
          tools: {
            async run(call, tctx) {
              if (call.name === "read_file" && runId !== null && cancelling === null) {
                t += 3_600_000; // well past the fixture's total_seconds
                cancelling = svc.cancel(runId).catch(() => undefined);
              }
              return real.run(call, tctx);
            },
          },
        });
        try {
          const created = await svc.createRun({
            workspace: path.join(ctx.scratch, "ws"),
            fixtureDir: path.join(ctx.repoRoot, "fixtures", "linkcheck"),
            model: "replay",
            trustReplayFile: false,
            backend: ctx.backend,
          });
          runId = created.run_id;
          // the replay's first decision is a plan; the read_file call comes right after
          await svc.settled(runId);
          if (cancelling) await cancelling;
          const view = await svc.settled(runId);
          const stops = (await svc.events(runId, 0, 0)).filter((e) => e.type === "run_stopped");
          const last = stops.at(-1)?.payload ?? {};
          return {
            status: view.status,
            cancelled: last.cancelled === true,
            deadline_passed: last.timed_out === true || last.exhausted === "total_seconds",
          };
        } finally {
          await svc.shutdown();
        }
      },
    },
    {
      id: "isolation_report",
      title: "the container isolation report from the probes",
      expected: { available: true, isolation_passed: true, failed_probes: [] },
      criterion:
        "runIsolationProbes against the same pinned image and HostConfig reports available=true and every probe passed; with no reachable engine it reports available=false, isolation_passed=false, reason=runtime_unavailable (and the command exits 2)",
      does_not_prove: "isolation against kernel or runtime escapes the probes do not exercise; each probe's own does_not_prove is in the probe report",
      async run(ctx) {
        const stateDir = ctx.imageLockPath ? path.dirname(ctx.imageLockPath) : path.join(ctx.scratch, "no-engine-state");
        const report = await runIsolationProbes({
          stateDir,
          config: { runtime: ctx.engine.runtime ?? "runc" },
          docker: createDockerClient(ctx.dockerEnv),
          hostEnv: { ...ctx.dockerEnv },
        });
        if (!report.available) return { available: false, isolation_passed: false, reason: report.reason };
        // the observation keeps only which probes failed; what each one saw says why (a failure under load is otherwise unexplained)
        ctx.recordDetails({ probes: report.probes.map(({ id, passed, observed }) => ({ id, passed, observed })) });
        return {
          available: true,
          isolation_passed: report.passed,
          failed_probes: report.probes
            .filter((p) => !p.passed)
            .map((p) => p.id)
            .sort(),
        };
      },
    },
  ],
};
