import type { EnvBuildBody, EnvLayersBody, GcBody, PolicyShowBody } from "../../daemon/src/contracts/api-responses.js";
import type { RunView, TraceEvent } from "../../daemon/src/contracts/run-view.js";
import { readTraceEvent } from "../../daemon/src/contracts/trace-event.js";
import { formatBytes } from "../../daemon/src/contracts/copy-limits.js";
import { renderDiff, type DiffStyle } from "./color.js";
import { oneLine, quoteArgv, testLines } from "../../client-lib/index.js";
import { whyLine } from "./why.js";

/** Text shapes of the client, kept apart from the flow so each stays short. */
export function progressLine(run: RunView): string {
  const t = run.tests ? testsShort(run.tests) : "tests -";
  const secs = (run.counters.elapsed_ms / 1000).toFixed(1);
  return oneLine(`${run.run_id}  ${run.status}  turn ${run.counters.model_turns}  last tool ${run.last_tool ?? "-"}  ${t}  ${secs}s`);
}

/** An exit-code-only run has no count: it says passed or failed by exit code, never "0/0". */
function testsShort(t: NonNullable<RunView["tests"]>): string {
  if (t.exit_code_only) return `tests ${t.green ? "passed" : "failed"} by exit code only`;
  // units that could not load are not tests: "1 collection error", never "0/0 passed"
  const errors = t.load_errors ?? 0;
  if (errors > 0) return `tests ${errors} collection error${errors === 1 ? "" : "s"}${t.discovered > 0 ? `, ${t.passed}/${t.discovered} passed` : ""}`;
  return `tests ${t.passed}/${t.discovered} passed`;
}

function str(v: unknown): string | null {
  return typeof v === "string" || typeof v === "number" || typeof v === "boolean" ? String(v) : null;
}

/** One plain line per event: seq, type, and the few payload fields a reader wants. */
export function eventLine(raw: TraceEvent): string {
  const parts = [`#${raw.seq}`, raw.type];
  // parsed by its type's schema (contracts/trace-event.ts); one this client cannot read (a newer daemon's) is named, not guessed at
  const e = readTraceEvent(raw);
  if (e === null) return oneLine([...parts, "(not readable by this client version)"].join(" "));
  const p: Record<string, unknown> = e.payload;
  for (const key of ["name", "tool", "path", "preset", "status", "reason", "decision", "by", "rule", "discovered", "passed", "failed", "ok", "code"]) {
    const v = str(p[key]);
    if (v !== null) parts.push(`${key}=${clip(v)}`);
  }
  // a command's argv and exit code; the project context by its facts (never its text: the trace has none)
  if (Array.isArray(p.argv) && p.argv.every((w) => typeof w === "string")) parts.push(`argv=${clip(quoteArgv(p.argv as string[]))}`);
  const exit = str(p.exit_code);
  if (exit !== null) parts.push(`exit_code=${exit}`);
  if (e.type === "project_context") parts.push(...projectContextParts(e.payload));
  if (e.call_id) parts.push(`call=${e.call_id}`);
  if (e.action_id) parts.push(`action=${e.action_id}`);
  return oneLine(parts.join(" "));
}

function clip(v: string): string {
  return v.length > 80 ? v.slice(0, 77) + "..." : v;
}

function projectContextParts(p: Record<string, unknown>): string[] {
  const rules = (p.rules ?? {}) as Record<string, unknown>;
  const map = (p.repo_map ?? {}) as Record<string, unknown>;
  const sha = (v: unknown) => (typeof v === "string" ? v.slice(0, 12) : "?");
  const cut = (v: unknown) => (v === true ? ",truncated" : "");
  return [
    typeof rules.path === "string"
      ? `rules=${clip(rules.path)}(${str(rules.given_bytes) ?? "?"}B,sha256:${sha(rules.sha256)}${cut(rules.truncated)})`
      : "rules=none",
    `repo_map=${str(map.entries) ?? "?"}_entries(${str(map.bytes) ?? "?"}B,sha256:${sha(map.sha256)}${cut(map.truncated)})`,
    ...(p.untrusted === true ? ["untrusted=true"] : []),
  ];
}

export function pendingActionText(run: RunView, style: DiffStyle = { color: false, terminal: false }): string {
  const a = run.pending_action;
  if (!a) return "";
  if (a.command) {
    // a command has no diff: what it would run, exactly, and which rule asked
    return [
      `approval needed for run ${run.run_id}`,
      `  action:  ${a.action_id}`,
      `  tool:    ${oneLine(a.tool)}`,
      `  command: ${quoteArgv(a.command.argv)}`,
      `  asked by rule: ${oneLine(a.command.rule)}`,
      `  why:     ${a.why === null ? "(the model gave no reason)" : oneLine(a.why)}`,
      "  it runs only in the run's sandbox (no network); files it changes there are discarded",
      "",
    ].join("\n");
  }
  const diff = renderDiff(a.diff, style);
  return [
    `approval needed for run ${run.run_id}`,
    `  action: ${a.action_id}`,
    `  tool:   ${oneLine(a.tool)}`,
    `  path:   ${oneLine(a.path)}`,
    `  asked by rule: ${a.rule === undefined ? "(not recorded)" : oneLine(a.rule)}`,
    `  why:    ${a.why === null ? "(the model gave no reason)" : oneLine(a.why)}`,
    "",
    diff.endsWith("\n") ? diff : diff + "\n",
  ].join("\n");
}

/**
 * The machine-readable status (`status --json`, `list --json` and every --json
 * command that ends at a run): the run view itself, so every fact behind the
 * verdict is there, plus the pending action id and the same `why` line a
 * person reads.
 */
export function statusJson(run: RunView): Record<string, unknown> {
  return {
    ...run,
    action_id: run.status === "awaiting_approval" ? (run.pending_action?.action_id ?? null) : null,
    why: whyLine(run),
  };
}

/**
 * The end of a run's summary after its why line: the files it changed (vs its
 * baseline) and where its trace file is. Empty when the view has neither
 * (a daemon from before they were reported).
 */
export function runEndLines(run: RunView): string {
  const lines: string[] = [...testLines(run)];
  const changed = run.changed_files;
  if (changed) {
    const more = changed.count > changed.paths.length ? ` (+${changed.count - changed.paths.length} more)` : "";
    lines.push(changed.count === 0 ? "changed files: none" : `changed files (${changed.count}): ${changed.paths.join(", ")}${more}`);
  }
  if (run.trace_file) lines.push(`trace file: ${run.trace_file}`);
  lines.push(...testOutputLines(run));
  return lines.map((l) => `${l}\n`).join("");
}

/** Where the full output of the run's latest test runs is kept (the trace and the model see only its tail). */
export function testOutputLines(run: Pick<RunView, "test_output">): string[] {
  const out = run.test_output ?? {};
  return [
    ...(out.run_tests ? [`test output (latest run_tests, in full): ${out.run_tests}`] : []),
    ...(out.verifier ? [`test output (Verifier, in full): ${out.verifier}`] : []),
  ];
}

/** an allow entry's placeholders (daemon/src/contracts/policy.ts ArgvShape), printed bare so they read as slots, not words */
const isPlaceholder = (w: string) => /^<(path|pkg)>(\.\.\.)?$/.test(w) || w === "...";
const SHAPE_LEGEND =
  "<path>: a workspace file or folder, relative, no .., not an option; <pkg>: a Go package in the module (., ./..., ./dir/...); <path>...: one or more; a lone ...: any further words";

function shapeText(shape: readonly string[]): string {
  return shape.map((w) => (isPlaceholder(w) ? w : quoteArgv([w]))).join(" ");
}

/** `policy show`: the effective policy, one fact a line, in the order it is decided (deny first). */
export function mib(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/** `gc`: what was freed, run by run, then what was kept and why. */
export function gcText(b: GcBody): string {
  const verb = b.dry_run ? "would free" : "freed";
  const lines = [
    `${verb} ${mib(b.bytes_freed)}: ${b.runs.length} finished run(s), ${b.baseline_results} cached baseline result(s)`,
    ...b.runs.slice(0, 50).map((r) => `  ${r.run_id}  ${r.status.padEnd(9)}  ${mib(r.bytes)}`),
    ...(b.runs.length > 50 ? [`  … and ${b.runs.length - 50} more`] : []),
    `kept: ${b.kept_finished} finished run(s) (the newest ${b.keep}, and any finished in the last ${days(b.older_than_ms)}), ${b.kept_open} that can still run or must be inspected`,
  ];
  return lines.map(oneLine).join("\n") + "\n";
}

function days(ms: number): string {
  return ms % 86_400_000 === 0 ? `${ms / 86_400_000} day(s)` : ms % 3_600_000 === 0 ? `${ms / 3_600_000} hour(s)` : `${Math.round(ms / 1000)} s`;
}

/** `env list|gc`: one line per layer; gc says first what it removed (or, dry, would remove). */
export function envText(body: EnvLayersBody): string {
  const lines: string[] = [];
  if (body.removed !== undefined) {
    const verb = body.dry_run ? "would remove" : "removed";
    lines.push(body.removed.length === 0 ? `${verb} nothing` : `${verb} ${body.removed.length}: ${body.removed.map((k) => k.slice(0, 12)).join(" ")}`);
  }
  if (body.layers.length === 0) lines.push("no dependency layers");
  else lines.push("KEY           FOLDER        SIZE        LAST USED                 RUNS");
  for (const l of body.layers) {
    const runs = l.runs.length === 0 ? "-" : l.runs.map((r) => (l.resumable_runs.includes(r) ? `${r} (resumable)` : r)).join(" ");
    lines.push(
      `${l.key.slice(0, 12)}  ${l.folder.padEnd(12)}  ${mib(l.size_bytes).padEnd(10)}  ${l.last_used_at.padEnd(24)}  ${runs}${l.present ? "" : " [volume gone]"}`,
    );
  }
  return lines.map(oneLine).join("\n") + "\n";
}

/** Which registry the install was pointed at, who named it, and whether credentials were held back. */
function registryLine(body: EnvBuildBody): string {
  const tool = body.tool ?? "npm";
  const what = { npm: "registry", pip: "index", go: "module proxy (GOPROXY)" }[tool];
  const dflt = { npm: "npm's default", pip: "pip's default", go: "Go's default" }[tool];
  const held =
    tool === "npm"
      ? "; its auth token stayed out of the sandbox (authenticated registries are not supported yet)"
      : "; its credentials stayed out of the sandbox (authenticated indexes are not supported yet)";
  return `${what} ${body.registry} (${body.registry_from === "default" ? dflt : `from ${body.registry_from}`})${body.auth_dropped ? held : ""}`;
}

/** `env build`: what the proxy allowed and refused, the install's output, and the layer it made (or why none). */
export function envBuildText(body: EnvBuildBody): string {
  const lines = [`install sandbox: ${body.command}`, registryLine(body), ...(body.notes ?? []), `allowed hosts: ${body.allowed_hosts.join(", ")}`];
  for (const e of body.egress.filter((x) => x.verdict === "refused")) lines.push(`refused: ${e.method} ${e.host}:${e.port}: ${e.reason ?? "not allowed"}`);
  const out = body.output.trimEnd();
  if (out) lines.push("--- install output ---", ...out.split("\n").slice(-40), "---");
  if (body.layer)
    lines.push(
      `layer ${body.layer.key.slice(0, 12)}: ${body.layer.folder}, ${mib(body.layer.size_bytes)}, ${body.layer.files} files (later runs of this workspace use it)`,
    );
  else if (body.oom_killed)
    lines.push(
      `the install was killed by the install sandbox's memory limit (${formatBytes(body.memory_limit_bytes)}, which also holds the installed folder and the download cache): no layer was made`,
    );
  else
    lines.push(body.timed_out ? "the install timed out: no layer was made" : `the install exited ${body.exit_code ?? "without a status"}: no layer was made`);
  return lines.map(oneLine).join("\n") + "\n";
}

export function policyText(shown: PolicyShowBody): string {
  const p = shown.policy;
  const source =
    p.source === null ? "built-in policy (no policy file)" : `${p.source}${shown.source_digest ? ` (sha256 ${shown.source_digest.slice(0, 12)})` : ""}`;
  const lines = [
    `profile     ${p.profile}`,
    `policy file ${source}`,
    `tools       read ${p.tools.read}, write ${p.tools.write}, command ${p.tools.command}, test ${p.tools.test}`,
    `auto_edit   ${p.auto_edit.length === 0 ? "(none: every write asks)" : p.auto_edit.join(" ")}`,
    `auto_edit_writable ${p.auto_edit_writable === true ? "on: writes inside the task's writable globs are approved by the policy" : "off"}`,
    `deny tokens ${p.deny_tokens.join(", ")} (and every shell as a program; deny beats every allow)`,
    ...(p.tools.command === "deny"
      ? ["commands    none run (tools.command deny beats the allowlist)"]
      : [
          "commands that run without asking:",
          ...(p.command_allow.length === 0 ? ["  (none)"] : p.command_allow.map((shape) => `  ${shapeText(shape)}`)),
          ...(p.command_allow.some((shape) => shape.some(isPlaceholder)) ? [`  (each the whole argv; ${SHAPE_LEGEND})`] : []),
          `unlisted    ${p.command_unlisted === "deny" ? "denied" : p.tools.command === "allow" && p.command_unlisted !== "ask" ? "run without asking" : "ask a person"}`,
        ]),
    `verify      ${(p.verify_commands ?? []).length === 0 ? "(no extra verify commands)" : (p.verify_commands ?? []).map((c) => `${c.name}: ${quoteArgv(c.command)}`).join("; ")}`,
    shown.workspace_file === null
      ? "workspace   no .mini-agent/policy.json (nothing tightened)"
      : `workspace   ${shown.workspace_file} tightens: ${JSON.stringify(p.workspace)}`,
  ];
  return lines.map(oneLine).join("\n") + "\n";
}
