import type { VerificationEvidence } from "../runtime/service.js";
import { countEvents, diffPaths, runReplay, withService } from "./harness.js";
import type { GroupDefinition, Json } from "./types.js";

/**
 * Group 1, closed loop: the canonical linkcheck replay on the container
 * backend, with the operator approving each write, ends `completed` only
 * because the host Verifier measured it.
 */
export const group1: GroupDefinition = {
  id: "group-1",
  title: "closed loop on the container backend",
  scenarios: [
    {
      id: "canonical_replay_completes",
      title: "canonical linkcheck replay: red once, two approved writes, verified green, completed",
      expected: {
        red_runs_observed: 1,
        approvals_given: 2,
        writes: 2,
        receipts: 2,
        diff_paths: ["src/linkcheck.js", "tests/test_agent_nested.js"],
        candidate_tests: { discovered: 3, passed: 3, failed: 0 },
        acceptance: { passed: ["nested_anchor_parent", "nested_missing", "nested_ok", "root_link_ok", "root_missing"], failed: [], error: null },
        protected_paths_changed: [],
        status: "completed",
      },
      criterion:
        "all facts equal: exactly one run_tests observation with failed > 0 before the fix; 2 approvals, 2 action_written and 2 action_receipt events; the diff against the baseline names exactly src/linkcheck.js and tests/test_agent_nested.js; the Verifier's fresh-container run found 3 tests, 3 passed; every hidden case passed; no protected path changed; final status completed",
      does_not_prove:
        "that a live model would find this fix, that the approvals a human gives are wise, or that the hidden cases cover every link-resolution bug; the replay is scripted",
      async run(ctx) {
        return withService(ctx, async (svc) => {
          const out = await runReplay(svc, ctx, { approve: true });
          const red = out.events.filter((e) => e.type === "tool_observed" && e.payload.tool === "run_tests" && Number(e.payload.failed) > 0).length;
          const v: VerificationEvidence | null = out.view.verification;
          return {
            red_runs_observed: red,
            approvals_given: out.approvals,
            writes: countEvents(out.events, "action_written"),
            receipts: countEvents(out.events, "action_receipt"),
            diff_paths: diffPaths(await svc.diff(out.runId)),
            candidate_tests: v ? { discovered: v.tests.discovered, passed: v.tests.passed, failed: v.tests.failed } : null,
            acceptance: (v?.acceptance ?? null) as Json,
            protected_paths_changed: v ? v.protected_paths_changed : null,
            status: out.view.status,
          };
        });
      },
    },
  ],
};
