import type { TestDelta, VerificationEvidence } from "../daemon/src/contracts/run-view.js";
import { EXIT_CODE_ONLY_PASSED, unstableSaid } from "../daemon/src/contracts/run-view.js";
import { reasonKind, type VerifierReason, verificationErrorDetail } from "../daemon/src/contracts/verifier-reason.js";
import { termSafe } from "./quote.js";

/**
 * Why the Verifier did not accept a run, in short parts a person reads: the
 * client's why line (client/src/why.ts) and the eval report's per-case lines
 * (test-lines.ts verdictLines) both say it with these words, so the two never
 * word one verdict differently.
 */

/** The headline reason first, then the facts that are known, each one short. */
export function verdictWhy(v: VerificationEvidence): string[] {
  const parts: string[] = [];
  const reason = v.reason ?? "verification_failed";
  if (v.changed_path_count === 0 || reason === "no_changes") parts.push("no_changes (the workspace is as the run found it)");
  const head = headline(reason, v);
  if (head !== null) parts.push(head);
  // where a secret is, never what it is: the evidence holds no value to show
  const secrets = v.diff_scan_hits ?? [];
  if (secrets.length > 0) parts.push(`secret in the diff (${list(secrets.map((h) => `${h.path} line ${h.line}: ${h.rule}`))})`);
  const failedChecks = (v.verify_commands ?? []).filter((c) => !c.passed);
  if (failedChecks.length > 0)
    parts.push(`verify command failed (${list(failedChecks.map((c) => `${c.name}: ${c.exit_code === null ? "no exit code" : `exit ${c.exit_code}`}`))})`);

  if (v.acceptance && reason !== "acceptance_protocol_error") {
    const a = v.acceptance;
    if (a.error !== null) parts.push(`hidden acceptance error: ${clip(a.error)}`);
    else
      parts.push(`hidden acceptance ${a.passed.length}/${a.passed.length + a.failed.length} passed${a.failed.length > 0 ? ` (${list(a.failed)} failed)` : ""}`);
  }
  const t = v.tests;
  const ran = t.exit_code !== null || t.timed_out || t.discovered > 0;
  // a false green is a statement about these very tests: the headline already said it
  if (ran && reason !== "false_green") {
    if (t.timed_out) parts.push("candidate tests timed out");
    else if (t.truncated) parts.push("candidate test output truncated, so its counts cannot be trusted");
    else if (t.exit_code_only)
      parts.push(
        t.exit_code === 0
          ? `candidate ${EXIT_CODE_ONLY_PASSED}`
          : `candidate tests failed by exit code only (runner exited ${t.exit_code ?? "without a code"}; no test count was available)`,
      );
    // four import errors are "4 collection errors", never "0/4 passed"
    else if (t.runner_error && !t.compare) parts.push(`candidate tests: ${t.runner_error.summary}`);
    else if (t.compare)
      // what failed outside the tests (collection errors, a runner that exited 1 with every test passed) is the reason
      parts.push(`candidate tests ${compareWhy(t.compare, t.passed, t.discovered, t.runner_error?.summary ?? null)}`);
    else parts.push(`candidate tests ${t.passed}/${t.discovered} passed${t.exit_code !== 0 ? `, runner exited ${t.exit_code ?? "without a code"}` : ""}`);
  }
  if (parts.length === 0) parts.push(reason);
  return parts;
}

/**
 * The words a reason adds before the facts, or null when the facts below say it
 * (which test, which command, which secret). Exhaustive over the one list in
 * contracts/verifier-reason.ts: a reason added there without words here fails
 * the type check.
 */
function headline(reason: VerifierReason, v: VerificationEvidence): string | null {
  const kind = reasonKind(reason);
  switch (kind) {
    case "protected_path_changed":
      return `protected path changed (${list(v.protected_paths_changed)})`;
    case "false_green":
      return `false green: ${v.false_green ?? "the candidate tests did not really run"}`;
    case "acceptance_protocol_error":
      return `hidden acceptance protocol error${v.acceptance?.error ? `: ${clip(v.acceptance.error)}` : ""}`;
    case "verification_error":
      return `verification error: ${verificationErrorDetail(reason)}`;
    // said by the line above (no_changes) or by the facts that follow
    case "no_changes":
    case "secret_in_diff":
    case "verify_command_failed":
    case "verification_failed":
      return null;
    default: {
      const unworded: never = kind;
      return unworded;
    }
  }
}

/** what the run found and is not blamed for: ", 1 skipped and 2 failing before the run; 6 test ids changed between two runs of the baseline (…): …" */
export function baselineFound(c: TestDelta): string {
  const skipped = c.counts.skipped_before ?? 0;
  const failing = c.counts.fail_to_fail ?? 0;
  const unstable = c.counts.unstable ?? 0;
  const found = [skipped > 0 ? `${skipped} skipped` : "", failing > 0 ? `${failing} failing` : ""].filter(Boolean);
  const said = found.length > 0 ? `, ${found.join(" and ")} before the run` : "";
  // said with the ids: a user must see which tests were not looked for, not only how many
  return unstable > 0 ? `${said}; ${unstableSaid(unstable)}: ${list(c.unstable ?? [])}` : said;
}

/** A failed comparison: what the run broke, removed or skipped, in that order, with a few ids. */
function compareWhy(c: TestDelta, passed: number, discovered: number, outside: string | null): string {
  const n = (k: string) => c.counts[k] ?? 0;
  // `passed` and `discovered` are the runner's own counts: the lists are by test id, and tests with
  // one name (a table of cases that print alike) are one id, so the lists' sum can be fewer
  const said: string[] = outside ? [outside] : [];
  const add = (k: "pass_to_fail" | "new_failed" | "disappeared" | "skipped_new", words: string) => {
    if (n(k) > 0) said.push(`${n(k)} ${words} (${list(c[k])})`);
  };
  add("pass_to_fail", "passed before and fail now");
  add("new_failed", "new failing");
  add("disappeared", "from before did not run");
  add("skipped_new", "newly skipped");
  const req = c.required ? [...c.required.fail_to_pass.failure, ...c.required.pass_to_pass.failure] : [];
  if (req.length > 0) said.push(`${req.length} required by the task not passing (${list(req)})`);
  // no test ran at all (every file failed to load): a count of 0/0 would only hide that
  const head = discovered === 0 && said.length > 0 ? "" : `${passed}/${discovered} passed${baselineFound(c)}`;
  return [head, ...said].filter(Boolean).join("; ");
}

/** At most five names, then how many more: a long list must not hide the rest of the line. */
function list(items: readonly string[]): string {
  const shown = items.slice(0, 5).join(", ");
  return items.length > 5 ? `${shown} and ${items.length - 5} more` : shown;
}

function clip(s: string, max = 160): string {
  return s.length > max ? `${s.slice(0, max - 3)}...` : s;
}

/** One terminal line (a path or an error text can carry escape sequences or newlines): quote.ts's one rule. */
export function oneLine(s: string): string {
  return termSafe(s);
}
