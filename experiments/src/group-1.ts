import type { VerificationEvidence } from "../../daemon/src/runtime/service.js";
import type { ImageFamily } from "../../daemon/src/contracts/test-report.js";
import type { RunServiceImpl } from "../../daemon/src/runtime/service-impl.js";
import { countEvents, diffPaths, type ReplayRunOutcome, runReplay, withService } from "./harness.js";
import type { GroupDefinition, Json, Scenario } from "./types.js";

/**
 * Group 1, closed loop: the canonical linkcheck replay on the container
 * backend, with the operator approving each write, ends `completed` only
 * because the host Verifier measured it; then the same loop for the python and
 * go fixtures, each in its own image family.
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
        return withService(ctx, async (svc) => closedLoopFacts(svc, await runReplay(svc, ctx, { approve: true })));
      },
    },
    familyScenario({
      family: "python",
      fixture: "semverlite",
      id: "python_fixture_completes",
      title: "canonical semverlite replay in the python image: pytest read as JUnit XML, red once, two approved writes, verified green, completed",
      diff_paths: ["semverlite/core.py", "tests/test_agent_two_digits.py"],
      tests: 12,
      cases: ["latest_major", "minor_two_digits", "patch_two_digits", "refuses_short", "same_version", "sort_mixed"],
      does_not_prove:
        "that the JUnit XML reader handles every runner's dialect, that a live model would find this fix, or that six hidden cases cover every ordering bug; the replay is scripted",
    }),
    familyScenario({
      family: "go",
      fixture: "wordwrap",
      id: "go_fixture_completes",
      title: "canonical wordwrap replay in the go image: go test -json, red once, two approved writes, verified green, completed",
      diff_paths: ["agent_width_test.go", "wordwrap.go"],
      tests: 5,
      cases: ["accented_pad", "accented_wrap", "ascii_wrap", "blank", "greek_column", "long_word"],
      does_not_prove:
        "that every go test -json stream (several packages, build failures) is read right, that a live model would find this fix, or that six hidden cases cover every width bug; the replay is scripted",
    }),
  ],
};

/** What a closed-loop run measured: the facts every group-1 scenario compares. */
async function closedLoopFacts(svc: RunServiceImpl, out: ReplayRunOutcome) {
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
}

interface FamilyFixture {
  family: Exclude<ImageFamily, "node">;
  fixture: string;
  id: string;
  title: string;
  diff_paths: string[];
  tests: number;
  /** hidden case ids, sorted as the evidence lists them */
  cases: string[];
  does_not_prove: string;
}

/**
 * The same closed loop for a fixture of another image family (issue 11): the run's
 * image_family picks the sandbox for run_tests, the Verifier and the acceptance run.
 */
function familyScenario(f: FamilyFixture): Scenario {
  return {
    id: f.id,
    title: f.title,
    expected: {
      image_family: f.family,
      red_runs_observed: 1,
      approvals_given: 2,
      writes: 2,
      receipts: 2,
      diff_paths: f.diff_paths,
      candidate_tests: { discovered: f.tests, passed: f.tests, failed: 0 },
      acceptance: { passed: f.cases, failed: [], error: null },
      protected_paths_changed: [],
      status: "completed",
    },
    criterion: `all facts equal: the run's image family is ${f.family}; exactly one run_tests observation with failed > 0 before the fix; 2 approvals, 2 action_written and 2 action_receipt events; the diff names exactly ${f.diff_paths.join(" and ")}; the Verifier's fresh ${f.family} sandbox found ${f.tests} tests, ${f.tests} passed; every hidden case passed; no protected path changed; final status completed`,
    does_not_prove: f.does_not_prove,
    async run(ctx) {
      const executor = await ctx.familyExecutor(f.family);
      return withService(
        ctx,
        async (svc) => {
          const out = await runReplay(svc, ctx, { fixture: `fixtures/${f.fixture}`, approve: true });
          return { image_family: out.view.image_family ?? null, ...(await closedLoopFacts(svc, out)) };
        },
        { [f.family]: executor },
      );
    },
  };
}
