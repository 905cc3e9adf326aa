/**
 * The host Verifier: "done" is decided here, never by the model (issue 4).
 *
 *   verify(input: VerifyInput): Promise<VerificationEvidence>
 *   `baseline` is the run-start manifest in hand, or `{runControlDir}`: the run's
 *   control dir in the state dir, where the baseline was captured (it is also kept
 *   out of every manifest). `acceptanceDir` holds the task's hidden assets, or null.
 *   A baseline that cannot be loaded is verification_error:baseline_<code>.
 *
 * Never throws for a verification outcome: every failure, including an
 * unreachable engine, comes back as evidence with passed=false and a reason:
 *   no_changes | protected_path_changed | secret_in_diff | false_green |
 *   verification_failed | verify_command_failed | acceptance_protocol_error |
 *   verification_error:<detail>
 * The caller persists the evidence and sets completed / failed.
 *
 * Steps: (1) manifest vs baseline: non-writable paths unchanged, a task that
 * requires a change changed something (else no_changes: requiresChange below),
 * and the added lines of the diff hold no secret (secret-scan.ts; file, line and
 * rule, never the value); (2) the task's verify_preset in a FRESH container
 * (executor.run, never a warm session), read by the preset's own parser (a
 * junit_xml report file is read back from that container) and judged by the one
 * rule run_tests uses (tools/test-verdict.ts); (2b) the extra verify commands
 * (task, policy, workspace policy: verify-commands.ts), each in its own FRESH
 * container exactly like the verify preset, each result in the evidence; (3) the
 * hidden acceptance command in a fresh container with the control dir at
 * /control, each case decided HERE against the task's expected answers (the
 * harness's own verdict is only a claim: code under test shares its sandbox);
 * (4) the manifest again, so the evidence names the exact workspace digest it
 * applies to. All steps run (except after a cancel or an engine
 * failure) so the evidence is complete; the reason is the first failure in order.
 */
import type { Logger } from "pino";
import type { EffectivePolicy } from "../contracts/policy.js";
import type { TaskSpec } from "../contracts/task-spec.js";
import type { DependencyLayerRef, SandboxResult } from "../contracts/sandbox.js";
import type { Executor } from "../sandbox/executor.js";
import type { VerificationEvidence, VerifyCommandResult } from "../contracts/run-view.js";
import { isMiniAgentError } from "../errors.js";
import { changedPaths, computeManifest, type Manifest } from "../workspace/manifest.js";
import { loadBaseline, type Baseline } from "../workspace/baseline.js";
import { protectedChanges } from "./protected-paths.js";
import { decideCases, parseAcceptanceOutput } from "./acceptance-protocol.js";
import { keepTestOutput } from "../tools/output-artifact.js";
import { limitsReached, presetInvocation, reportFileFor, summarizePreset, testRunFacts, type PresetInvocation } from "../tools/run-tests.js";
import { verifierExport, withHiddenTestFiles } from "./verifier-export.js";
import { checkRequiredTests, describeRequiredFailures, withRequired } from "./required-tests.js";
import type { TestCase } from "../contracts/test-report.js";
import { VERIFIER_DEFAULTS } from "./limits.js";
import { judgeAgainstBaseline, judgeTestRun, type BaselineVerdict } from "../tools/test-verdict.js";
import { firstLines, runnerError } from "../tools/runner-error.js";
import { baselineTestsOf, type BaselineTestStore } from "./baseline-tests.js";
import { scanWorkspaceDiff } from "./diff-secrets.js";
import { describeHit } from "./secret-scan.js";
import { runVerifyCommands, type RunVerifyCommand } from "./verify-commands.js";
import { workspaceVerifyRefusal } from "../policy/workspace-verify.js";
import type { VerifierReason } from "../contracts/verifier-reason.js";

export interface VerifierDeps {
  computeManifest(root: string, opts: { excludeAbs?: readonly string[] }): Promise<Manifest>;
  loadBaseline(runControlDir: string): Promise<Pick<Baseline, "manifest" | "readFile">>;
  /** the preset's argv with its test files expanded host-side, exactly as run_tests does it */
  presetInvocation(task: TaskSpec, preset: string, workspaceRoot: string): Promise<PresetInvocation | null>;
}

export const DEFAULT_VERIFIER_DEPS: VerifierDeps = {
  computeManifest: (root, opts) => computeManifest(root, opts),
  loadBaseline: (dir) => loadBaseline(dir),
  presetInvocation: (task, preset, root) => presetInvocation(task, preset, root),
};

// the limits live beside the baseline runner that shares them; exported here as before
export { VERIFIER_DEFAULTS };

export interface VerifyInput {
  /** the daemon's live credentials, for the full test output kept outside the ledger */
  knownSecrets?: () => readonly string[];
  runId: string;
  task: TaskSpec;
  workspaceRoot: string;
  /** the run-start manifest, or the run's control dir it is loaded from (kept out of every manifest) */
  baseline: Manifest | { runControlDir: string };
  /** hidden acceptance assets, copied read-only to /control in a fresh container; never into the workspace */
  acceptanceDir: string | null;
  executor: Executor;
  /** the run's resolved policy (RunRecord.policy): its verify commands, and the workspace file's, run too; absent: none */
  policy?: EffectivePolicy;
  /** the run's `--sandbox-include` globs; the task's forbidden globs come from `task` */
  sandboxInclude?: readonly string[];
  /** the run's dependency layers: its fresh sandboxes mount the same ones as run_tests' did */
  dependencyLayers?: readonly DependencyLayerRef[];
  /** told which opted-in paths entered a Verifier sandbox (log and trace); must not throw */
  onSandboxInclude?: (paths: string[]) => void;
  /** where the baseline's test results are cached (the state dir's baseline-tests/); absent: not cached */
  baselineTests?: BaselineTestStore;
  signal?: AbortSignal;
  log?: Logger;
  deps?: Partial<VerifierDeps>;
}

/** the one list of reasons (contracts/verifier-reason.ts): a reason outside it does not type-check */
type Reason = VerifierReason;

class Stop extends Error {
  /** `detail`: what went wrong in words (an engine's or the sandbox's own message), for the evidence's details */
  constructor(
    readonly reason: Reason,
    readonly detail?: string,
  ) {
    super(reason);
  }
}

/** Executor failures (engine gone, image missing) end verification as an error, not as a verdict. */
async function runFresh(executor: Executor, req: Parameters<Executor["run"]>[0]): Promise<SandboxResult> {
  try {
    return await executor.run(req);
  } catch (err) {
    const code = isMiniAgentError(err) ? err.code : "internal";
    // "no space left on device" or a refused copy must be readable in `status`, not only in the daemon's log
    throw new Stop(
      `verification_error:${code}`,
      isMiniAgentError(err)
        ? `the sandbox could not run ${req.purpose === "acceptance" ? "the acceptance check" : "the tests"}: ${firstLines(err.message, 3).join(" ")}`
        : undefined,
    );
  }
}

export async function verify(input: VerifyInput): Promise<VerificationEvidence> {
  const deps: VerifierDeps = { ...DEFAULT_VERIFIER_DEPS, ...input.deps };
  const log = input.log?.child({ runId: input.runId, part: "verifier" });
  const { task, executor, signal } = input;
  const runControlDir = "runControlDir" in input.baseline ? input.baseline.runControlDir : null;
  const manifestOpts = { excludeAbs: runControlDir === null ? [] : [runControlDir] };
  const acceptanceDir = input.acceptanceDir;
  // both fresh sandboxes get exactly what run_tests' sandbox got (the same export rule), and the task's hidden tests
  const overlay = verifierExport({ task, acceptanceDir, sandboxInclude: input.sandboxInclude, dependencyLayers: input.dependencyLayers });
  const exported = {
    workspaceDir: input.workspaceRoot,
    exportSpec: overlay.spec,
    ...(input.onSandboxInclude && { onIncluded: input.onSandboxInclude }),
  };
  const details: string[] = [];
  const reasons: Reason[] = [];
  const evidence: VerificationEvidence = {
    workspace_digest: "",
    protected_paths_changed: [],
    tests: { discovered: 0, passed: 0, failed: 0, exit_code: null, timed_out: false, truncated: false },
    acceptance: null,
    passed: false,
    reason: null,
    details,
  };

  try {
    if (overlay.refusal !== null) throw new Stop(`verification_error:${overlay.refusal}`);
    // (1) protected paths
    const loaded = runControlDir === null ? null : await loadRunBaseline(deps, runControlDir, log);
    const baseline = loaded === null ? (input.baseline as Manifest) : loaded.manifest;
    const before = await deps.computeManifest(input.workspaceRoot, manifestOpts).catch((err: unknown) => {
      log?.error({ err }, "manifest failed");
      throw new Stop(`verification_error:${isMiniAgentError(err) ? err.code : "manifest_unreadable"}`);
    });
    evidence.workspace_digest = before.digest;
    evidence.protected_paths_changed = protectedChanges(task, baseline, before);
    evidence.changed_path_count = changedPaths(baseline, before).length;
    if (requiresChange(task) && evidence.changed_path_count === 0) {
      reasons.push("no_changes");
      details.push("the run changed nothing; a task without hidden acceptance must change the workspace");
    }
    if (evidence.protected_paths_changed.length > 0) {
      reasons.push("protected_path_changed");
      details.push(`protected paths changed: ${evidence.protected_paths_changed.join(", ")}`);
    }
    // a credential the run wrote: named by file and line only, never by its value
    const secrets = await scanWorkspaceDiff({ workspaceRoot: input.workspaceRoot, baseline, now: before, baselineFile: loaded?.readFile ?? null }).catch(
      (err: unknown) => {
        // a baseline copy that fails its hash check, a file that cannot be read: not judged, never passed
        log?.error({ err }, "diff scan failed");
        throw new Stop(`verification_error:diff_scan_${isMiniAgentError(err) ? err.code : "unreadable"}`);
      },
    );
    evidence.diff_scan_hits = secrets.hits;
    if (secrets.hits.length > 0) {
      reasons.push("secret_in_diff");
      const more = secrets.more > 0 ? ` and ${secrets.more} more` : "";
      details.push(`secret in the diff: ${secrets.hits.map(describeHit).join(", ")}${more}`);
    }
    if (secrets.skipped.length > 0) details.push(`not scanned for secrets (larger than 4 MiB): ${secrets.skipped.slice(0, 3).join(", ")}`);

    // (2) candidate tests in a fresh container
    const preset = task.test_presets[task.verify_preset];
    const inv = await withHiddenTestFiles(await deps.presetInvocation(task, task.verify_preset, input.workspaceRoot), preset, overlay.spec.overlay);
    if (preset === undefined || inv === null) throw new Stop("verification_error:unknown_preset");
    if (preset.files.length > 0 && inv.files.length === 0) {
      reasons.push("false_green");
      evidence.false_green = "the preset's test files match nothing in the workspace";
      details.push(evidence.false_green);
    } else {
      // the same parser and report file as run_tests reads for this preset
      const reportFile = reportFileFor(preset.parser, VERIFIER_DEFAULTS);
      const r = await runFresh(executor, {
        runId: input.runId,
        purpose: "verifier",
        argv: inv.argv,
        ...exported,
        timeoutMs: inv.timeoutMs,
        outputCapBytes: VERIFIER_DEFAULTS.outputCapBytes,
        signal,
        ...(reportFile && { reportFile }),
      });
      if (r.cancelled) throw new Stop("verification_error:cancelled");
      if (runControlDir !== null) await keepTestOutput(runControlDir, "verifier", r, input.knownSecrets?.() ?? []);
      const summary = summarizePreset(preset.parser, r, VERIFIER_DEFAULTS);
      // the same preset on the run's baseline copy (cached per baseline): the result is judged against it
      const baselineRun =
        runControlDir === null || "exit_code_only" in summary
          ? null
          : await baselineTestsOf(
              {
                runId: input.runId,
                task,
                controlDir: runControlDir,
                baselineDigest: baseline.digest,
                executor,
                exportSpec: exported.exportSpec,
                ...(exported.onIncluded && { onIncluded: exported.onIncluded }),
                ...(input.baselineTests && { store: input.baselineTests }),
                ...(signal && { signal }),
              },
              task.verify_preset,
            );
      if (signal?.aborted) throw new Stop("verification_error:cancelled");
      // a cancelled test did not pass: the evidence counts it with the failures
      const counts = { discovered: summary.discovered, passed: summary.passed, failed: summary.failed + summary.cancelled };
      evidence.tests = {
        ...counts,
        exit_code: r.exit_code,
        timed_out: r.timed_out,
        truncated: r.truncated,
        limits: r.limits,
        runner_signal: r.signal,
        // no count exists: readers must not show the zeros as "0/0"
        ...("exit_code_only" in summary && { exit_code_only: true }),
        ...(!("exit_code_only" in summary) && { skipped: summary.skipped + summary.todo }),
      };
      const failedOutside = runnerError(r, summary);
      if (failedOutside !== null) evidence.tests.runner_error = failedOutside;
      details.push(...sandboxFacts("candidate tests", r));
      const empty = summary.files_without_tests;
      // the names come from runner output that test code can print into: a few, cut short
      const named = empty.slice(0, 3).map((f) => (f.length > 128 ? `${f.slice(0, 128)}…` : f));
      if (empty.length > 0)
        details.push(
          `${empty.length} test file(s) exited without running a test (not counted): ${named.join(", ")}${empty.length > named.length ? ", …" : ""}`,
        );
      // the same rule run_tests tells the model (tools/test-verdict.ts)
      const judged: BaselineVerdict =
        baselineRun === null
          ? { ...judgeTestRun(testRunFacts(r), summary), delta: null }
          : judgeAgainstBaseline(
              testRunFacts(r),
              summary,
              baselineRun,
              task.regression_test ? { regressionTest: { changed: changedPaths(baseline, before) } } : {},
            );
      if (judged.delta !== null) {
        evidence.tests.compare = judged.delta;
        // what was found and not held against the run is said, not only what failed
        if (judged.green) details.push(`candidate tests: ${judged.message}`);
      }
      // a green exit-code-only run is weaker, and the evidence says so in the verdict's own words
      if (judged.green && "exit_code_only" in summary) details.push(`candidate tests: ${judged.message}`);
      if (!judged.green) {
        details.push(`candidate tests: ${judged.message}`);
        reasons.push(judged.kind === "false_green" ? "false_green" : "verification_failed");
        // the client shows this as the why of a false green
        if (judged.kind === "false_green") evidence.false_green = judged.message;
      }
      // the task's own FAIL_TO_PASS / PASS_TO_PASS / must_pass, id by id (required-tests.ts)
      const required = checkRequiredTests(task, "cases" in summary ? (summary.cases as readonly TestCase[] | undefined) : undefined);
      if (required !== null) {
        evidence.tests.compare = withRequired(evidence.tests.compare, required);
        const failing = describeRequiredFailures(required);
        if (failing !== null) {
          reasons.push("verification_failed");
          details.push(failing);
        }
      }
    }

    // (2b) the extra verify commands, each in a fresh container like the preset
    const extra = runVerifyCommands(task, input.policy);
    if (extra.length > 0) {
      const results: VerifyCommandResult[] = [];
      evidence.verify_commands = results;
      for (const c of extra) {
        // decided again here, not only at creation: a run created before this rule, or resumed, is held to it too
        const refused = c.source === "workspace" && input.policy ? workspaceVerifyRefusal(input.policy, c.command, executor.kind) : null;
        if (refused !== null) {
          results.push(notRun(c, refused));
          details.push(`verify command ${c.label} was not run: ${refused}`);
          continue;
        }
        const r = await runVerifyCommand(c, (req) => runFresh(executor, { runId: input.runId, ...exported, signal, ...req }));
        results.push(r.result);
        details.push(...r.facts);
      }
      const failed = results.filter((r) => !r.passed);
      if (failed.length > 0) {
        reasons.push("verify_command_failed");
        details.push(`verify command(s) failed: ${failed.map((r) => `${r.name} (${r.message})`).join("; ")}`);
      }
    }

    // (3) hidden acceptance in a fresh container, control assets at /control
    if (task.acceptance) {
      if (!acceptanceDir) throw new Stop("verification_error:acceptance_assets_missing");
      const r = await runFresh(executor, {
        runId: input.runId,
        purpose: "acceptance",
        argv: [...task.acceptance.command],
        ...exported,
        controlDir: acceptanceDir,
        timeoutMs: task.acceptance.timeout_seconds * 1000,
        outputCapBytes: VERIFIER_DEFAULTS.outputCapBytes,
        signal,
      });
      if (r.cancelled) throw new Stop("verification_error:cancelled");
      details.push(...sandboxFacts("acceptance", r));
      const accReason = judgeAcceptance(r, task.acceptance, evidence, details);
      if (accReason) reasons.push(accReason);
    }

    // (4) the evidence must name the workspace it applies to
    const after = await deps.computeManifest(input.workspaceRoot, manifestOpts);
    if (after.digest !== before.digest) throw new Stop("verification_error:workspace_changed_during_verification");
  } catch (err) {
    if (err instanceof Stop) {
      reasons.unshift(err.reason);
      if (err.detail) details.push(err.detail);
    } else {
      log?.error({ err }, "verifier failed unexpectedly");
      reasons.unshift("verification_error:internal");
    }
  }

  evidence.reason = reasons[0] ?? null;
  evidence.passed = reasons.length === 0;
  log?.info({ passed: evidence.passed, reason: evidence.reason, digest: evidence.workspace_digest }, "verification finished");
  return evidence;
}

/**
 * NO_CHANGES: when an empty diff fails a run (issue 11, issue 12 "no_changes when the task
 * requires a change"). A task WITHOUT hidden acceptance requires one: nothing else proves
 * work was done, so an empty diff fails as no_changes, the first thing said (the tests
 * still run, so the evidence is complete). A task WITH hidden acceptance is judged by its
 * cases: an always-empty replay already fails them (the shipped fixtures' bugs are in
 * the repo), and a task whose starting repo already answers every hidden case correctly
 * has nothing left to require, so an empty diff there is not a failure by itself. The
 * offline report's canonical figures (experiments/src/) rest on this rule.
 */
function requiresChange(task: TaskSpec): boolean {
  return !task.acceptance;
}

type FreshRun = (req: Pick<Parameters<Executor["run"]>[0], "purpose" | "argv" | "timeoutMs" | "outputCapBytes" | "reportFile">) => Promise<SandboxResult>;

/** A workspace verify command the policy refused: it did not pass, so the run cannot be green on it. */
function notRun(c: RunVerifyCommand, why: string): VerifyCommandResult {
  return {
    name: c.label,
    argv: [...c.command],
    exit_code: null,
    passed: false,
    timed_out: false,
    truncated: false,
    duration_ms: 0,
    message: `not run: ${why}`,
  };
}

/** One extra verify command, read by its parser and judged by the one rule run_tests uses. */
async function runVerifyCommand(c: RunVerifyCommand, run: FreshRun): Promise<{ result: VerifyCommandResult; facts: string[] }> {
  const reportFile = reportFileFor(c.parser, VERIFIER_DEFAULTS);
  const r = await run({
    purpose: "verifier",
    argv: [...c.command],
    timeoutMs: c.timeout_seconds * 1000,
    outputCapBytes: VERIFIER_DEFAULTS.outputCapBytes,
    ...(reportFile && { reportFile }),
  });
  if (r.cancelled) throw new Stop("verification_error:cancelled");
  const judged = judgeTestRun(testRunFacts(r), summarizePreset(c.parser, r, VERIFIER_DEFAULTS));
  // judged by the one rule; an exit-code check (a linter) is said in its own words, not a test runner's
  const plainExit = c.parser === "exit_code" && r.exit_code !== null && !r.timed_out && !r.truncated && !r.sandbox_lost && r.signal === null;
  return {
    result: {
      name: c.label,
      argv: [...c.command],
      exit_code: r.exit_code,
      passed: judged.green,
      timed_out: r.timed_out,
      truncated: r.truncated,
      duration_ms: r.duration_ms,
      message: plainExit ? `exited with code ${r.exit_code}` : judged.message,
    },
    facts: sandboxFacts(`verify command ${c.label}`, r),
  };
}

async function loadRunBaseline(deps: VerifierDeps, dir: string, log: Logger | undefined): Promise<Pick<Baseline, "manifest" | "readFile">> {
  try {
    return await deps.loadBaseline(dir);
  } catch (err) {
    log?.error({ err }, "baseline could not be loaded");
    throw new Stop(`verification_error:baseline_${isMiniAgentError(err) ? err.code : "unreadable"}`);
  }
}

/** What the sandbox itself says about a run, so the evidence names a killed runner or a limit reached (issue 10 item 8). */
function sandboxFacts(what: string, r: SandboxResult): string[] {
  const facts: string[] = [];
  if (r.sandbox_lost) facts.push(`${what}: the sandbox stopped while it ran; no status came back`);
  if (r.signal !== null) facts.push(`${what}: the runner was killed by ${r.signal}`);
  const reached = limitsReached(r);
  if (reached !== null) facts.push(`${what}: ${reached}`);
  return facts;
}

function judgeAcceptance(r: SandboxResult, spec: NonNullable<TaskSpec["acceptance"]>, evidence: VerificationEvidence, details: string[]): Reason | null {
  if (r.timed_out) {
    evidence.acceptance = { passed: [], failed: [], error: "acceptance timed out" };
    details.push("acceptance timed out");
    return "verification_failed";
  }
  if (r.truncated) {
    evidence.acceptance = { passed: [], failed: [], error: "acceptance output was truncated" };
    details.push("acceptance output was truncated");
    return "acceptance_protocol_error";
  }
  const parsed = parseAcceptanceOutput(r.stdout, spec.cases);
  if (!parsed.ok) {
    evidence.acceptance = { passed: [], failed: [], error: parsed.error };
    details.push(`acceptance protocol error: ${parsed.error}`);
    return "acceptance_protocol_error";
  }
  // the harness's own verdicts are claims; the host holds the expected answers
  const decided = decideCases(parsed.cases, spec.expected);
  evidence.acceptance = { passed: decided.passed, failed: decided.failed, error: null };
  if (decided.claimed_but_wrong.length > 0) {
    // the ids only: the expected answers stay hidden
    details.push(`hidden acceptance case(s) reported as passed with a wrong answer: ${decided.claimed_but_wrong.join(", ")}`);
  }
  if (decided.failed.length > 0) {
    details.push(`hidden acceptance case(s) failed: ${decided.failed.join(", ")}`);
    return "verification_failed";
  }
  if (r.exit_code !== 0) {
    details.push(`acceptance reported every case passed but exited ${r.exit_code}`);
    return "verification_failed";
  }
  return null;
}
