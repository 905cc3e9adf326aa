import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Backend, FAMILY_NAME_PATTERN, IMAGE_FAMILIES, Runtime, SandboxInclude, sandboxIncludeRefusal } from "../../daemon/src/contracts/sandbox.js";
import { MiniAgentError } from "../../daemon/src/errors.js";
import { OrchestratorName } from "../../daemon/src/contracts/run.js";
import { COPY_LIMIT_FLAGS, parseByteSize, parseFileCount } from "../../daemon/src/contracts/copy-limits.js";
import { type ApiClient, EXIT, exitForStatus, type ExitCode, oneLine, quoteArgv, shellQuote } from "../../client-lib/index.js";
import { BUDGET_FLAGS, type CommandName, type ParsedCommand } from "./args.js";
import { followRun, type FollowIO } from "./follow.js";
import { renderDiff } from "./color.js";
import { envBuildText, envText, eventLine, gcText, mib, policyText, progressLine, runEndLines, statusJson, testOutputLines } from "./render.js";
import { whyLine } from "./why.js";
import { McpOptionError, resolveMcpOptions } from "./mcp/options.js";

export interface CommandContext extends FollowIO {
  api: ApiClient;
  cwd: string;
  json: boolean;
  /** `--socket PATH` / `--state-dir DIR` as given, repeated in printed commands */
  commandPrefix: string;
  /** this program as the user can run it again (config/program-command.ts): the start of every printed command */
  program: string;
}

/** a mistake on the command line (exit 64); never sent to the daemon */
export class UsageError extends MiniAgentError {
  constructor(message: string) {
    super("invalid_request", message);
    this.name = "UsageError";
  }
}

type Handler = (cmd: ParsedCommand, ctx: CommandContext) => Promise<ExitCode>;

const opt = (cmd: ParsedCommand, name: string): string | undefined => {
  const v = cmd.opts[name];
  return typeof v === "string" ? v : undefined;
};
const flag = (cmd: ParsedCommand, name: string): boolean => cmd.opts[name] === true;
const arg = (cmd: ParsedCommand, i: number): string => cmd.args[i] ?? "";

function printJson(ctx: CommandContext, value: unknown): void {
  ctx.out(JSON.stringify(value, null, 2) + "\n");
}

/** --max-* flags as a partial Budgets; the daemon validates ranges with the same schema */
function budgetsFrom(cmd: ParsedCommand): Partial<Record<(typeof BUDGET_FLAGS)[keyof typeof BUDGET_FLAGS], number>> | undefined {
  const out: Partial<Record<(typeof BUDGET_FLAGS)[keyof typeof BUDGET_FLAGS], number>> = {};
  for (const [flagName, field] of Object.entries(BUDGET_FLAGS)) {
    const v = opt(cmd, flagName);
    if (v === undefined) continue;
    if (!/^\d+$/.test(v) || Number(v) < 1) throw new UsageError(`--${flagName} takes a positive integer`);
    out[field] = Number(v);
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** --sandbox-include PATH (repeatable), checked with the daemon's own schema and wildcard rule so a bad one is a usage error */
function sandboxIncludeFrom(cmd: ParsedCommand): string[] {
  const given = cmd.opts["sandbox-include"];
  const globs = Array.isArray(given) ? given : [];
  const parsed = SandboxInclude.safeParse(globs);
  // zod/mini has no pretty-printer; the issue's path and message are what a user needs
  if (!parsed.success)
    throw new UsageError(`--sandbox-include: ${parsed.error.issues.map((i) => `${i.path.length ? `[${i.path.join(".")}] ` : ""}${i.message}`).join("; ")}`);
  for (const glob of parsed.data) {
    const why = sandboxIncludeRefusal(glob);
    if (why) throw new UsageError(why);
  }
  return parsed.data;
}

/** --max-workspace-bytes/-files, read before anything is sent (exit 64 for a value that is not a size or a count) */
export function copyLimitsFrom(cmd: ParsedCommand): { max_workspace_bytes?: number; max_workspace_files?: number } {
  const bytesText = opt(cmd, COPY_LIMIT_FLAGS.maxBytes.slice(2));
  const filesText = opt(cmd, COPY_LIMIT_FLAGS.maxFiles.slice(2));
  const bytes = bytesText === undefined ? undefined : parseByteSize(bytesText);
  const files = filesText === undefined ? undefined : parseFileCount(filesText);
  if (bytes === null) throw new UsageError(`${COPY_LIMIT_FLAGS.maxBytes}: a size in bytes, or with K, M or G (binary), at least 1`);
  if (files === null) throw new UsageError(`${COPY_LIMIT_FLAGS.maxFiles}: a whole number, at least 1`);
  return { ...(bytes !== undefined && { max_workspace_bytes: bytes }), ...(files !== undefined && { max_workspace_files: files }) };
}

/** The client owns nothing: the one file it reads is a task spec, to send it. */
async function readTaskSpec(file: string): Promise<unknown> {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (err) {
    throw new UsageError(`--task-spec: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? "error"})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new UsageError(`--task-spec: ${file} is not valid JSON`);
  }
  // classic zod, loaded only by this command: every other command starts without it (issue 10 item 16)
  const [{ TaskSpec }, { describeZodError }] = await Promise.all([
    import("../../daemon/src/contracts/task-spec.js"),
    import("../../daemon/src/contracts/common.js"),
  ]);
  const parsed = TaskSpec.safeParse(json);
  if (!parsed.success) throw new MiniAgentError("invalid_task_spec", `${file}: ${describeZodError(parsed.error)}`);
  return json; // the daemon validates again: it is the one that must be right
}

const list_ = (cmd: ParsedCommand, name: string): string[] => {
  const v = cmd.opts[name];
  return Array.isArray(v) ? v : [];
};

function isKind(p: string, kind: "file" | "dir"): boolean {
  try {
    const st = fs.statSync(p);
    return kind === "file" ? st.isFile() : st.isDirectory();
  } catch {
    return false;
  }
}

/** `run --workspace DIR --goal TEXT ...`: the daemon drafts the task; the client only passes what was typed. */
function adhocFrom(cmd: ParsedCommand) {
  const goal = opt(cmd, "goal");
  const test = opt(cmd, "test");
  if (goal === undefined) {
    for (const name of ["test", "writable", "protect", "print-task"]) {
      if (cmd.opts[name] !== undefined) throw new UsageError(`--${name} belongs to an ad-hoc run: run --workspace DIR --goal TEXT`);
    }
    return undefined;
  }
  if (goal.trim() === "") throw new UsageError("--goal is empty; say what the change should achieve");
  if (opt(cmd, "fixture") || opt(cmd, "task-spec") || opt(cmd, "control"))
    throw new UsageError("--goal drafts the task itself; do not combine it with --fixture, --task-spec or --control");
  return { goal, ...(test !== undefined && { test }), writable: list_(cmd, "writable"), protect: list_(cmd, "protect") };
}

const run: Handler = async (cmd, ctx) => {
  const abs = (p: string | undefined) => (p === undefined ? undefined : path.resolve(ctx.cwd, p));
  const fixture = abs(opt(cmd, "fixture"));
  // a fixture run copies repo/ into a NEW folder: without --workspace one is made beside the temp dir (named at start)
  const workspace = abs(opt(cmd, "workspace")) ?? (fixture !== undefined ? freshWorkspaceFor(fixture) : undefined);
  const taskSpecFile = abs(opt(cmd, "task-spec"));
  if (!workspace) throw new UsageError("run needs --workspace DIR");
  const adhoc = adhocFrom(cmd);
  const imageFamily = opt(cmd, "image-family");
  if (!adhoc && (fixture === undefined) === (taskSpecFile === undefined))
    throw new UsageError("run needs exactly one of --fixture DIR, --task-spec FILE or --goal TEXT");
  if (fixture && opt(cmd, "control")) throw new UsageError("--control comes from the fixture; use it only with --task-spec");
  const model = opt(cmd, "model") ?? "replay";
  if (model !== "replay" && model !== "live") throw new UsageError("--model: use replay or live");
  const backend = Backend.safeParse(opt(cmd, "backend") ?? "container");
  if (!backend.success) throw new UsageError("--backend: use container or trusted_local");
  const replay = abs(opt(cmd, "replay"));
  const control = abs(opt(cmd, "control"));
  // named here, as usage errors (64) with the flag, before anything is sent: the daemon's refusal named neither
  if (replay !== undefined && !isKind(replay, "file")) throw new UsageError(`--replay: no file at ${oneLine(replay)}`);
  if (control !== undefined && !isKind(control, "dir")) throw new UsageError(`--control: no folder at ${oneLine(control)}`);
  const budgets = budgetsFrom(cmd);
  const sandboxInclude = sandboxIncludeFrom(cmd);
  const policyProfile = await policyProfileFrom(cmd);
  const orchestrator = orchestratorFrom(cmd);
  const runtime = runtimeFrom(cmd, backend.data);
  const copyLimits = copyLimitsFrom(cmd);
  let draftId: string | undefined;
  if (adhoc) {
    // drafted first: bad input is refused (exit 64) and the dirty-worktree warning shown before anything starts
    const draft = await ctx.api.draftTask({ workspace, ...adhoc, ...(imageFamily !== undefined && { image_family: imageFamily }) });
    for (const w of draft.warnings) ctx.err(`warning: ${oneLine(w)}\n`);
    if (flag(cmd, "print-task")) {
      printJson(ctx, draft.task);
      return EXIT.ok;
    }
    if (!ctx.json) ctx.err(`test command (${draft.test_source}): ${testCommandLine(draft.task)}\n`);
    // the run starts with this very draft, or the daemon refuses it (draft_stale): never a second, unseen one
    draftId = draft.draft_id;
  }
  // after the draft, whose refusals are about the workspace itself
  if (model === "replay" && replay === undefined && fixture === undefined)
    throw new UsageError("the replay model needs --replay FILE (the decisions to replay) unless the run uses a fixture; or use --model live");
  const install = opt(cmd, "install");
  if (install === undefined && cmd.opts["allow-host"] !== undefined) throw new UsageError("--allow-host goes with --install CMD");
  if (install !== undefined) {
    // the install sandbox first (env build): its layer is found again by the run through package.json and the lock
    const given = cmd.opts["allow-host"];
    const built = await ctx.api.envBuild({
      workspace,
      install,
      allow_hosts: Array.isArray(given) ? given : [],
      ...(imageFamily !== undefined && { image_family: imageFamily }),
    });
    ctx.err(envBuildText(built));
    if (built.layer === null) return EXIT.failed;
  }
  const created = await ctx.api.createRun({
    workspace,
    model,
    backend: backend.data,
    ...(runtime !== undefined && { runtime }),
    trust_replay_file: flag(cmd, "trust-replay-file"),
    ...(adhoc !== undefined && { adhoc: { ...adhoc, ...(draftId !== undefined && { draft_id: draftId }) } }),
    ...(imageFamily !== undefined && { image_family: imageFamily }),
    ...(fixture !== undefined && { fixture_dir: fixture }),
    ...(taskSpecFile !== undefined && { task_spec: (await readTaskSpec(taskSpecFile)) as never }),
    ...(control !== undefined && { control_dir: control }),
    ...(replay !== undefined && { replay_path: replay }),
    ...(budgets !== undefined && { budgets }),
    ...(sandboxInclude.length > 0 && { sandbox_include: sandboxInclude }),
    ...(policyProfile !== undefined && { policy_profile: policyProfile }),
    ...(orchestrator !== undefined && { orchestrator }),
    ...copyLimits,
  });
  const by = orchestrator !== undefined ? `, orchestrator ${orchestrator}` : "";
  const under = runtime !== undefined ? `, runtime ${runtime}` : "";
  if (!ctx.json) ctx.out(`run ${created.run.run_id} started (model ${model}, backend ${backend.data}${under}${by}, workspace ${oneLine(workspace)})\n`);
  return followRun(ctx.api, created.run, 0, ctx, { json: ctx.json, commandPrefix: ctx.commandPrefix, program: ctx.program, interactive: true });
};

/** --runtime, checked before anything is sent (exit 64): a known OCI runtime, and only for the container backend */
function runtimeFrom(cmd: ParsedCommand, backend: Backend): Runtime | undefined {
  const given = opt(cmd, "runtime");
  if (given === undefined) return undefined;
  const known = Runtime.safeParse(given);
  if (!known.success) throw new UsageError(`--runtime: use runc or runsc (got '${given}')`);
  // refused, not ignored: a run recorded as runsc whose tests ran as host processes would mislead
  if (backend === "trusted_local")
    throw new UsageError("--runtime picks the container backend's OCI runtime; --backend trusted_local runs host processes and has none");
  return known.data;
}

/** A path under the temp dir that does not exist yet, for `run --fixture DIR` without --workspace (the daemon creates it). */
function freshWorkspaceFor(fixture: string): string {
  const name = path.basename(fixture).replace(/[^A-Za-z0-9._-]/g, "_") || "fixture";
  return path.join(os.tmpdir(), `mini-agent-${name}-${crypto.randomBytes(4).toString("hex")}`);
}

/** --orchestrator, checked against the names before anything is sent (exit 64 for an unknown one) */
function orchestratorFrom(cmd: ParsedCommand): OrchestratorName | undefined {
  const given = opt(cmd, "orchestrator");
  if (given === undefined) return undefined;
  const known = OrchestratorName.safeParse(given);
  if (!known.success) throw new UsageError(`--orchestrator: use one of ${OrchestratorName.options.join(", ")} (got '${given}')`);
  return known.data;
}

/** --policy-profile, checked against the profile names before anything is sent (exit 64 for an unknown one) */
async function policyProfileFrom(cmd: ParsedCommand): Promise<"interactive" | "ci" | "eval" | undefined> {
  const given = opt(cmd, "policy-profile");
  if (given === undefined) return undefined;
  // classic zod behind the names: loaded only when the flag is given (issue 10 item 16)
  const { PROFILE_NAMES } = await import("../../daemon/src/contracts/policy.js");
  const known = PROFILE_NAMES.find((p) => p === given);
  if (known === undefined) throw new UsageError(`--policy-profile: use one of ${PROFILE_NAMES.join(", ")} (got '${given}')`);
  return known;
}

/** the verify preset's argv as one line, for the user to see what will run */
function testCommandLine(task: Record<string, unknown>): string {
  const presets = task.test_presets as Record<string, { command?: string[]; files?: string[]; parser?: string }> | undefined;
  const p = presets?.[String(task.verify_preset)];
  if (!p?.command) return "(none)";
  const files = p.files && p.files.length > 0 ? ` + files ${p.files.join(" ")}` : "";
  return `${p.command.map(shellQuote).join(" ")}${files} [${p.parser ?? "?"}]`;
}

const status: Handler = async (cmd, ctx) => {
  const { run: r } = await ctx.api.getRun(arg(cmd, 0));
  if (ctx.json) printJson(ctx, statusJson(r));
  else ctx.out(`${progressLine(r)}\n${whyLine(r, ctx.commandPrefix, ctx.program)}\n${runEndLines(r)}`);
  return exitForStatus(r.status);
};

const list: Handler = async (_cmd, ctx) => {
  const { runs } = await ctx.api.listRuns();
  if (ctx.json) printJson(ctx, runs.map(statusJson));
  else if (runs.length === 0) ctx.out("no runs\n");
  else for (const r of runs) ctx.out(`${r.run_id}  ${whyLine(r, ctx.commandPrefix, ctx.program)}  ${oneLine(r.workspace)}\n`);
  return EXIT.ok;
};

/** approve/reject/resume answer, then follow the run to its next stop (documented in --help). */
function thenFollow(act: (cmd: ParsedCommand, ctx: CommandContext) => ReturnType<ApiClient["getRun"]>, check?: (cmd: ParsedCommand) => void): Handler {
  return async (cmd, ctx) => {
    check?.(cmd); // usage errors before any request
    const before = await ctx.api.getRun(arg(cmd, 0));
    const { run: after } = await act(cmd, ctx);
    if (flag(cmd, "no-follow")) {
      if (ctx.json) printJson(ctx, statusJson(after));
      else ctx.out(`${progressLine(after)}\n`);
      return exitForStatus(after.status);
    }
    return followRun(ctx.api, after, before.run.last_seq, ctx, { json: ctx.json, commandPrefix: ctx.commandPrefix, program: ctx.program, interactive: true });
  };
}

/**
 * `approve chk_ID` / `reject chk_ID`: a person's answer to a command an MCP
 * agent's sandbox_exec asked about. What would run is shown with the answer;
 * there is no run to follow.
 */
async function decideCheck(cmd: ParsedCommand, ctx: CommandContext, decision: "approve" | "reject"): Promise<ExitCode> {
  const reason = opt(cmd, "reason");
  const body = await ctx.api.decideCheck(arg(cmd, 0), { decision, ...(reason !== undefined && { reason }) });
  if (ctx.json) printJson(ctx, body);
  else ctx.out(oneLine(`${body.state} ${body.id}: ${quoteArgv(body.argv)} in a sandbox of ${body.workspace}`) + "\n");
  return EXIT.ok;
}

const isCheck = (cmd: ParsedCommand) => cmd.args.length === 1 && arg(cmd, 0).startsWith("chk_");

const approveRun = thenFollow((cmd, ctx) => ctx.api.approve(arg(cmd, 0), arg(cmd, 1)));
const approve: Handler = (cmd, ctx) => (isCheck(cmd) ? decideCheck(cmd, ctx, "approve") : approveRun(cmd, ctx));
const rejectRun = thenFollow(
  (cmd, ctx) => ctx.api.reject(arg(cmd, 0), arg(cmd, 1), opt(cmd, "reason") ?? ""),
  (cmd) => {
    if (!opt(cmd, "reason")) throw new UsageError("reject needs --reason TEXT (the model is told why)");
  },
);
const reject: Handler = (cmd, ctx) => {
  if (!isCheck(cmd)) return rejectRun(cmd, ctx);
  if (!opt(cmd, "reason")) throw new UsageError("reject needs --reason TEXT (the agent is told why)");
  return decideCheck(cmd, ctx, "reject");
};
const resume = thenFollow(
  (cmd, ctx) => ctx.api.resume(arg(cmd, 0), budgetsFrom(cmd)),
  (cmd) => void budgetsFrom(cmd),
);

const cancel: Handler = async (cmd, ctx) => {
  const { run: r } = await ctx.api.cancel(arg(cmd, 0));
  if (ctx.json) printJson(ctx, statusJson(r));
  else ctx.out(whyLine(r, ctx.commandPrefix, ctx.program) + "\n");
  return exitForStatus(r.status);
};

const trace: Handler = async (cmd, ctx) => {
  if (flag(cmd, "file")) {
    if (flag(cmd, "jsonl")) throw new UsageError("trace takes --jsonl or --file, not both");
    const text = await ctx.api.traceFile(arg(cmd, 0));
    ctx.out(text);
    // a crash cuts at most the line being written: it is shown as it is, and named as torn (the parser never takes it as an event)
    if (text !== "" && !text.endsWith("\n")) {
      ctx.out("\n");
      ctx.err(`trace file of ${arg(cmd, 0)}: the last line (${text.split("\n").length}) is torn (no newline: cut short by a crash), not a valid event\n`);
    }
    return EXIT.ok;
  }
  const jsonl = await ctx.api.trace(arg(cmd, 0));
  if (flag(cmd, "jsonl") || ctx.json) {
    ctx.out(jsonl.endsWith("\n") || jsonl === "" ? jsonl : jsonl + "\n");
    return EXIT.ok;
  }
  for (const line of jsonl.split("\n").filter(Boolean)) {
    try {
      const e = JSON.parse(line) as Parameters<typeof eventLine>[0];
      ctx.out(eventLine({ ...e, payload: e.payload ?? {}, call_id: e.call_id ?? null, action_id: e.action_id ?? null }) + "\n");
    } catch {
      ctx.out(oneLine(line) + "\n");
    }
  }
  // the events carry only a tail of each test run's output: say where all of it is (the file is replaced by the next run)
  const view = await ctx.api.getRun(arg(cmd, 0)).catch(() => null);
  for (const l of view ? testOutputLines(view.run) : []) ctx.out(`${l}\n`);
  return EXIT.ok;
};

const diff: Handler = async (cmd, ctx) => {
  const d = await ctx.api.diff(arg(cmd, 0));
  if (ctx.json) printJson(ctx, d);
  else if (d.diff === "") ctx.out("(no changes)\n");
  else {
    const shown = renderDiff(d.diff, ctx.diffStyle);
    ctx.out(shown.endsWith("\n") ? shown : shown + "\n");
  }
  return EXIT.ok;
};

const probe: Handler = async (cmd, ctx) => {
  const rt = opt(cmd, "runtime");
  const runtime = rt === undefined ? undefined : Runtime.safeParse(rt);
  if (runtime && !runtime.success) throw new UsageError("--runtime: use runc or runsc");
  const family = opt(cmd, "family");
  // the shape only: a custom family lives in the daemon's image lock, and the daemon names the known ones
  if (family !== undefined && !FAMILY_NAME_PATTERN.test(family)) {
    throw new UsageError(`--family: use one of ${IMAGE_FAMILIES.join(", ")} or a custom family built into the daemon's state dir`);
  }
  if (!ctx.json) ctx.out("running isolation probes (this starts several sandbox containers)...\n");
  const { report } = await ctx.api.probe(runtime?.data, family);
  const passed = report?.passed === true;
  if (ctx.json) printJson(ctx, report);
  else {
    const probes = Array.isArray(report?.probes) ? (report.probes as Array<Record<string, unknown>>) : [];
    for (const p of probes) ctx.out(`${p.passed === true ? "pass" : "FAIL"}  ${String(p.id)}  ${String(p.property ?? "")}\n`);
    const where = typeof report?.image_family === "string" ? `, ${report.image_family} image` : "";
    ctx.out(
      passed
        ? `isolation verified (${probes.length} probes passed${where})\n`
        : `isolation NOT verified${report?.reason ? `: ${String(report.reason)}` : ""}\n`,
    );
  }
  return passed ? EXIT.ok : EXIT.unavailable;
};

const events: Handler = async (cmd, ctx) => {
  const sinceRaw = opt(cmd, "since") ?? "0";
  if (!/^\d+$/.test(sinceRaw)) throw new UsageError("--since takes a non-negative integer");
  const since = Number(sinceRaw);
  const runId = arg(cmd, 0);
  if (flag(cmd, "follow")) {
    const { run: r } = await ctx.api.getRun(runId);
    return followRun(
      ctx.api,
      r,
      since,
      { ...ctx, isTTY: false },
      { json: ctx.json, commandPrefix: ctx.commandPrefix, program: ctx.program, interactive: false },
    );
  }
  const res = await ctx.api.events(runId, since, 0);
  for (const e of res.events) ctx.out((ctx.json ? JSON.stringify(e) : eventLine(e)) + "\n");
  return EXIT.ok;
};

/** A family's isolation verdict in words: "no probe has run yet" is not "stale". */
function isolationText(f: { verdict: string; generated_at: string | null; reason: string | null }): string {
  const at = f.generated_at ? ` (report of ${f.generated_at})` : "";
  if (f.verdict === "passed") return `passed${at}`;
  if (f.reason === "no_report") return "none: no probe has run yet for this image, sandbox config, engine and runtime";
  if (f.reason === "image_missing") return "none: the image is not built";
  if (f.verdict === "stale") return `stale${at}: older than a live run accepts`;
  return `${f.verdict}${at}${f.reason ? ` (${f.reason})` : ""}`;
}

const health: Handler = async (_cmd, ctx) => {
  const h = await ctx.api.health();
  if (ctx.json) printJson(ctx, h);
  else {
    ctx.out(`daemon   pid ${h.daemon.pid}, version ${h.daemon.version}, api ${h.daemon.api}\n`);
    ctx.out(
      `engine   ${h.engine.reachable ? `reachable (${h.engine.version ?? "?"})` : `UNREACHABLE${h.engine.error ? `: ${h.engine.error}` : ""}`}, runtime ${h.engine.runtime}\n`,
    );
    ctx.out(
      `image    ${h.engine.image_present ? `present ${h.engine.image_digest}` : `MISSING${h.engine.image_digest ? ` ${h.engine.image_digest}` : ""} (npm run image:build)`}\n`,
    );
    const probe = (family?: string) => `${ctx.program} probe${ctx.commandPrefix ? ` ${ctx.commandPrefix}` : ""}${family ? ` --family ${family}` : ""}`;
    ctx.out(
      `isolation ${isolationText(h.isolation)}${h.isolation.verdict === "passed" ? "" : `; ${h.isolation.reason === "image_missing" ? "build the image: npm run image:build" : `run: ${probe()}`}`}\n`,
    );
    // other families: informational (a live run of that family needs it), never part of the exit code
    for (const [family, f] of Object.entries(h.families ?? {})) {
      const refresh = f.reason === "image_missing" ? `npm run image:build -- --family ${family}` : probe(family);
      ctx.out(`  ${family.padEnd(7)} ${isolationText(f)}${f.verdict === "passed" ? "" : `; ${refresh}`}\n`);
    }
    if (h.state_dir)
      ctx.out(
        oneLine(
          `state    ${h.state_dir.path}, ${h.state_dir.bytes === null ? "size unknown" : mib(h.state_dir.bytes)}; free what finished runs left: ${ctx.program} gc${ctx.commandPrefix ? ` ${ctx.commandPrefix}` : ""} --dry-run`,
        ) + "\n",
      );
  }
  return h.ok ? EXIT.ok : EXIT.unavailable;
};

const policy: Handler = async (cmd, ctx) => {
  if (arg(cmd, 0) !== "show") throw new UsageError(`policy takes 'show' (got '${arg(cmd, 0)}')`);
  const profile = await policyProfileFrom(cmd);
  const workspace = opt(cmd, "workspace");
  const shown = await ctx.api.policy(profile, workspace === undefined ? undefined : path.resolve(ctx.cwd, workspace));
  if (ctx.json) printJson(ctx, shown);
  else ctx.out(policyText(shown));
  return EXIT.ok;
};

/** `--older-than`: a whole number with s, m, h or d; refused (exit 64) otherwise, before anything is sent */
function durationMs(given: string): number {
  const m = /^(\d{1,9})([smhd])$/.exec(given);
  if (!m) throw new UsageError(`--older-than: use a whole number with s, m, h or d, e.g. 7d or 12h (got '${given}')`);
  return Number(m[1]) * { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as "s" | "m" | "h" | "d"];
}

/** `env build`: the install runs in the daemon's install sandbox; exit 0 only when it made the layer */
async function envBuild(cmd: ParsedCommand, ctx: CommandContext): Promise<ExitCode> {
  if (opt(cmd, "older-than") !== undefined || cmd.opts["dry-run"] !== undefined) throw new UsageError("--older-than and --dry-run go with `env gc`");
  const workspace = opt(cmd, "workspace");
  if (workspace === undefined) throw new UsageError("env build needs --workspace DIR");
  const given = cmd.opts["allow-host"];
  const body = await ctx.api.envBuild({
    workspace: path.resolve(ctx.cwd, workspace),
    install: opt(cmd, "install") ?? "npm ci",
    allow_hosts: Array.isArray(given) ? given : [],
  });
  if (ctx.json) printJson(ctx, body);
  else ctx.out(envBuildText(body));
  return body.layer !== null ? EXIT.ok : EXIT.failed;
}

const env: Handler = async (cmd, ctx) => {
  const sub = arg(cmd, 0);
  if (sub === "build") return envBuild(cmd, ctx);
  if (sub !== "list" && sub !== "gc") throw new UsageError(`env takes 'list', 'gc' or 'build' (got '${sub}')`);
  if (opt(cmd, "workspace") !== undefined || opt(cmd, "install") !== undefined || cmd.opts["allow-host"] !== undefined)
    throw new UsageError("--workspace, --install and --allow-host go with `env build`");
  if (sub === "list" && (opt(cmd, "older-than") !== undefined || cmd.opts["dry-run"] !== undefined))
    throw new UsageError("--older-than and --dry-run go with `env gc`");
  const olderThan = opt(cmd, "older-than");
  const body =
    sub === "list" ? await ctx.api.envLayers() : await ctx.api.envGc(olderThan === undefined ? 0 : durationMs(olderThan), cmd.opts["dry-run"] === true);
  if (ctx.json) printJson(ctx, body);
  else ctx.out(envText(body));
  return EXIT.ok;
};

/** `--keep`: a whole number of runs, refused (exit 64) otherwise */
function keepCount(given: string): number {
  if (!/^\d{1,6}$/.test(given)) throw new UsageError(`--keep: use a whole number of runs, e.g. 20 (got '${given}')`);
  return Number(given);
}

const gc: Handler = async (cmd, ctx) => {
  const olderThan = opt(cmd, "older-than");
  const keep = opt(cmd, "keep");
  // an option not given is left to the daemon's default retention (GC_DEFAULTS)
  const body = await ctx.api.gc({
    ...(olderThan !== undefined && { older_than_ms: durationMs(olderThan) }),
    ...(keep !== undefined && { keep: keepCount(keep) }),
    dry_run: cmd.opts["dry-run"] === true,
  });
  if (ctx.json) printJson(ctx, body);
  else ctx.out(gcText(body));
  return EXIT.ok;
};

/** the tool set's version, told to MCP clients; bumped when a tool's contract changes */
const MCP_TOOLSET_VERSION = "1.0.0";

/**
 * `mcp`: options first (a bad --http or token file is refused before anything
 * listens), then the SDK, loaded only for this command so every other command's
 * start-up stays as it was. The import is written HERE, beside cli.ts: the
 * bundle keeps lazy imports as written, relative to the one bundled file.
 */
const mcp: Handler = async (cmd, ctx) => {
  let options;
  try {
    options = resolveMcpOptions(
      { ...optional("workspace", opt(cmd, "workspace")), ...optional("http", opt(cmd, "http")), ...optional("tokenFile", opt(cmd, "token-file")) },
      ctx.cwd,
    );
  } catch (err) {
    if (err instanceof McpOptionError) throw new UsageError(err.message);
    throw err;
  }
  const { serveMcp } = await import("./mcp/index.js");
  await serveMcp({ api: ctx.api, options, version: MCP_TOOLSET_VERSION, commandSuffix: ctx.commandPrefix, program: ctx.program, err: ctx.err });
  return EXIT.ok;
};

function optional<K extends string>(key: K, value: string | undefined): Partial<Record<K, string>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, string>);
}

export const HANDLERS: Record<CommandName, Handler> = {
  run,
  status,
  list,
  approve,
  reject,
  resume,
  cancel,
  trace,
  diff,
  probe,
  events,
  health,
  policy,
  env,
  gc,
  mcp,
};
