import path from "node:path";
import { countEvents, fixtureDir, fixtureRepoDigest, manifestDigest, observedFor, runReplay, withService } from "./harness.js";
import type { ExperimentContext, GroupDefinition, Json, Scenario } from "./types.js";
import { MiniAgentError } from "../../daemon/src/errors.js";

/**
 * Group 2, failing closed: every bad proposal is refused with a code the model
 * can act on, before any side effect; and "done" without evidence is not done.
 */
async function refusedCall(ctx: ExperimentContext, replay: string, callId: string): Promise<Json> {
  return withService(ctx, async (svc) => {
    const out = await runReplay(svc, ctx, { replay, approve: false });
    const obs = observedFor(out.events, callId);
    return {
      code: (obs?.error as Json) ?? null,
      ok: (obs?.ok as Json) ?? null,
      writes: countEvents(out.events, "action_written"),
      approvals_requested: countEvents(out.events, "approval_requested"),
      manifest_unchanged: (await manifestDigest(out.workspace)) === (await fixtureRepoDigest(ctx)),
      completed: out.view.status === "completed",
    };
  });
}

function refusal(id: string, title: string, replay: string, callId: string, code: string, dnp: string): Scenario {
  return {
    id,
    title,
    expected: { code, ok: false, writes: 0, approvals_requested: 0, manifest_unchanged: true, completed: false },
    criterion: `the call's observation is ok=false with code ${code}; no approval was requested, nothing was written, the workspace manifest equals the shipped fixture's, and the run did not complete`,
    does_not_prove: dnp,
    run: (ctx) => refusedCall(ctx, replay, callId),
  };
}

export const group2: GroupDefinition = {
  id: "group-2",
  title: "failing closed",
  scenarios: [
    refusal(
      "unknown_tool",
      "a call to a tool that does not exist",
      "replays/unknown-tool.json",
      "call_01_unknown",
      "unknown_tool",
      "that every possible tool name is refused; only that names outside the protocol's tools are",
    ),
    refusal(
      "invalid_fields",
      "a known tool with an extra argument field",
      "replays/invalid-fields.json",
      "call_01_invalid",
      "invalid_fields",
      "that every malformed argument shape is caught; the schemas are strict, this is one instance",
    ),
    refusal(
      "stale_version",
      "a patch quoting a version the file does not have",
      "replays/stale-version.json",
      "call_01_stale",
      "stale_version",
      "anything about concurrent edits during a write; this is the pre-write version check",
    ),
    {
      id: "oversized_output_truncated",
      title: "a sandboxed command printing 1 MiB is cut at the 256-byte cap and says so",
      expected: { truncated: true, kept_bytes_at_most_256: true, exit_code: 0 },
      criterion: "truncated=true and stdout+stderr kept <= 256 bytes, for a command that printed 1 MiB in a fresh container",
      does_not_prove: "that a model reads the truncation flag; nor any bound on output other than the per-request cap",
      async run(ctx) {
        if (!ctx.executor) throw new MiniAgentError("runtime_unavailable", "no sandbox engine");
        const r = await ctx.executor.run({
          runId: "experiments-truncation",
          purpose: "bench",
          argv: ["node", "-e", "process.stdout.write('x'.repeat(1 << 20))"],
          workspaceDir: path.join(fixtureDir(ctx), "repo"),
          timeoutMs: 60_000,
          outputCapBytes: 256,
        });
        const kept = Buffer.byteLength(r.stdout) + Buffer.byteLength(r.stderr);
        return { truncated: r.truncated, kept_bytes_at_most_256: kept <= 256, exit_code: r.exit_code };
      },
    },
    {
      id: "always_empty_rejected",
      title: "an always-empty checker passes the candidate tests but fails hidden case nested_missing",
      expected: {
        candidate_tests: { discovered: 3, passed: 3, failed: 0 },
        hidden_failed_includes_nested_missing: true,
        status: "failed",
        reason: "verification_failed",
      },
      criterion:
        "the Verifier's fresh candidate run is green (3/3) yet the hidden acceptance lists nested_missing as failed, and the run ends failed with reason verification_failed",
      does_not_prove: "that the hidden cases catch every wrong implementation; only this over-fitting one",
      async run(ctx) {
        return withService(ctx, async (svc) => {
          const out = await runReplay(svc, ctx, { replay: "replays/always-empty.json", approve: true });
          const v = out.view.verification;
          return {
            candidate_tests: v ? { discovered: v.tests.discovered, passed: v.tests.passed, failed: v.tests.failed } : null,
            hidden_failed_includes_nested_missing: v?.acceptance?.failed.includes("nested_missing") ?? false,
            status: out.view.status,
            reason: out.view.reason,
          };
        });
      },
    },
    {
      id: "final_without_work",
      title: "a model that says done without doing anything",
      expected: { status: "failed", completed: false, writes: 0, verification_ran: true, manifest_unchanged: true },
      criterion: "the run is verified by the host (verification_started recorded) and does not complete; nothing was written",
      does_not_prove: "which reason a different untouched task would fail with; here the hidden cases and tests decide",
      async run(ctx) {
        return withService(ctx, async (svc) => {
          const out = await runReplay(svc, ctx, { replay: "replays/final-without-work.json", approve: false });
          return {
            status: out.view.status,
            completed: out.view.status === "completed",
            writes: countEvents(out.events, "action_written"),
            verification_ran: countEvents(out.events, "verification_started") === 1,
            manifest_unchanged: (await manifestDigest(out.workspace)) === (await fixtureRepoDigest(ctx)),
          };
        });
      },
    },
  ],
};
