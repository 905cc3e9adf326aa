import { GC_DEFAULTS } from "../../daemon/src/contracts/api-responses.js";
import type { ParseArgsConfig } from "node:util";
import { didYouMean, parseCli } from "../../daemon/src/config/cli-args.js";
import { FAMILY_CHOICES } from "../../daemon/src/contracts/sandbox.js";

/**
 * Command-line grammar of mini-agent-client: one table of commands, each with
 * its positionals and options. Unknown flags and missing arguments are usage
 * errors (exit 64), never guessed.
 */
type OptionSpec = NonNullable<ParseArgsConfig["options"]>;

/** budget overrides for run and resume; unset ones keep the task's (or the run's) values */
const BUDGET_OPTIONS: OptionSpec = {
  "max-turns": { type: "string" },
  "max-tool-calls": { type: "string" },
  "max-seconds": { type: "string" },
  "max-tokens": { type: "string" },
};
/** each --max-* flag and the budget it sets (the run view names budgets by these fields) */
export const BUDGET_FLAGS = { "max-turns": "model_turns", "max-tool-calls": "tool_calls", "max-seconds": "total_seconds", "max-tokens": "tokens" } as const;
const BUDGET_HELP = "budgets: --max-turns N --max-tool-calls N --max-seconds N --max-tokens N override the task's.";

const GLOBAL: OptionSpec = {
  socket: { type: "string" },
  "state-dir": { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
};

interface CommandSpec {
  positionals: string[];
  /** a second shape of its arguments, taken when the first argument matches (approve chk_…: a sandbox_exec's question, no run) */
  alternative?: { positionals: string[]; when: RegExp };
  options: OptionSpec;
  summary: string;
  details?: string;
}

export const COMMANDS = {
  run: {
    positionals: [],
    options: {
      fixture: { type: "string" },
      workspace: { type: "string" },
      "task-spec": { type: "string" },
      control: { type: "string" },
      model: { type: "string" },
      replay: { type: "string" },
      "trust-replay-file": { type: "boolean" },
      backend: { type: "string" },
      runtime: { type: "string" },
      "sandbox-include": { type: "string", multiple: true },
      goal: { type: "string" },
      test: { type: "string" },
      writable: { type: "string", multiple: true },
      protect: { type: "string", multiple: true },
      "image-family": { type: "string" },
      "print-task": { type: "boolean" },
      "policy-profile": { type: "string" },
      orchestrator: { type: "string" },
      "max-workspace-bytes": { type: "string" },
      "max-workspace-files": { type: "string" },
      install: { type: "string" },
      "allow-host": { type: "string", multiple: true },
      ...BUDGET_OPTIONS,
    },
    summary:
      "run --fixture DIR [--workspace NEWDIR] | run --workspace DIR --task-spec FILE [--control DIR]\n" +
      '      | run --workspace DIR --goal TEXT [--test "CMD ARG..."] [--writable GLOB]... [--protect GLOB]... [--print-task]\n' +
      `      [--image-family ${FAMILY_CHOICES}|CUSTOM] [--model replay|live] [--replay FILE] [--trust-replay-file]\n` +
      "      [--backend container|trusted_local] [--runtime runc|runsc] [--sandbox-include PATH ...]\n" +
      "      [--policy-profile interactive|ci|eval]\n" +
      "      [--orchestrator manual|langgraph|agents-sdk] [--max-workspace-bytes SIZE] [--max-workspace-files N]\n" +
      '      [--install "npm ci" [--allow-host HOST[:PORT]]...]',
    details:
      "--install CMD first runs CMD in an install sandbox, exactly as `env build` does (see `env --help`); the run\n" +
      "  starts only when that made the workspace's dependency layer, and its sandboxes mount it read-only.\n" +
      "Creates a run and follows it. --fixture copies DIR/repo into NEWDIR (which must not exist; without\n" +
      "--workspace, a new folder under the temp dir, named when the run starts) and uses the\n" +
      "fixture's task.json, control/ and replay.json. Default model: replay; default backend: container.\n" +
      "--runtime runc|runsc picks the OCI runtime of the run's sandboxes (warm session, Verifier, acceptance; kept for\n" +
      "  resume); default: the daemon's. Not with --backend trusted_local (host processes have none). A runtime the\n" +
      "  engine does not have is refused before anything is created (exit 2); a live run needs a passing isolation\n" +
      "  report for that runtime (`mini-agent-client probe --runtime R [--family F]`).\n" +
      "--goal works on your own folder IN PLACE (usually a git checkout): the daemon drafts the task from it.\n" +
      "  The test command is detected (package.json scripts.test, pyproject.toml/pytest.ini/setup.cfg/tests/**/test_*.py,\n" +
      '  go.mod, a Makefile test: target) unless --test "CMD ARG..." names it (split like shell words, never run by a\n' +
      "  shell: no pipes, &&, redirections or $VARS). Every file may change except the protected ones: .git/**, lock\n" +
      "  files, CI configuration, node_modules/, .venv/, AGENTS.md. --writable GLOB replaces what may change,\n" +
      "  --protect GLOB adds protection (protected always wins).\n" +
      "  A dirty git worktree is listed first: those changes become part of the baseline. No hidden acceptance: the run\n" +
      "  must change something, and the tests must pass (exit-code-only when no report can be read: weaker, said so).\n" +
      "  --print-task prints the drafted task.json (warnings on stderr) and creates nothing; save it, edit it, and\n" +
      "  run it with --task-spec. --image-family sets the sandbox image (default: from the test command, else node).\n" +
      "At a pending write it shows the diff: on a terminal it asks y/N; otherwise it prints the approve/reject\n" +
      "commands and exits 3.\n" +
      "Files the task forbids (.env*, keys, credential files: the built-in list, and the task's forbidden globs) never enter a sandbox;\n" +
      "--sandbox-include PATH (repeatable) lets the file it names in for a project whose tests need it; a wildcard\n" +
      "is refused, name each file (logged and traced; read_file still refuses them; links, special files and .git\n" +
      "never go in).\n" +
      "Before anything is copied, the workspace (or the fixture's repo/) is measured: over 96 MiB (sparse files count by\n" +
      "  their length) or 20,000 files it is refused with the figure and the limit (exit 64). --max-workspace-bytes SIZE\n" +
      "  (bytes, or 200M, 1G) and --max-workspace-files N raise the limits for this run (default: the daemon's).\n" +
      "--policy-profile picks a profile of the daemon's policy (default: its default_profile, else interactive);\n" +
      "`mini-agent-client policy show` prints what a run gets.\n" +
      "--orchestrator picks who takes the turns: manual (default; mini-agent's own loop), langgraph (a LangGraph.js\n" +
      "state graph) or agents-sdk (the OpenAI Agents SDK's Runner). Tools, policy, approvals, the ledger, the sandbox\n" +
      "and the Verifier are the same for all three; status, trace, approve, resume, cancel and exit codes too.\n" +
      BUDGET_HELP,
  },
  status: {
    positionals: ["RUN"],
    options: {},
    summary: "status RUN [--json]",
    details:
      "Prints where the run stands and, when it did not complete, why (failed hidden cases, protected paths, false green,\nno changes, the budget that ran out). --json prints the run view with every fact behind it, plus action_id\n(when awaiting approval) and the same `why` line.",
  },
  list: { positionals: [], options: {}, summary: "list [--json]" },
  approve: {
    positionals: ["RUN", "ACTION"],
    alternative: { positionals: ["APPROVAL"], when: /^chk_/ },
    options: { "no-follow": { type: "boolean" } },
    summary: "approve RUN ACTION [--no-follow] | approve chk_ID",
    details:
      "Approves the pending write, then follows the run to its next stop and exits with the run's code\n(3 again at the next approval). --no-follow returns right after approving.\n" +
      "approve chk_ID answers a command an MCP agent's sandbox_exec asked about (shown first: the argv and the workspace);\n" +
      "the agent's next sandbox_exec with that approval_id runs it once, if the workspace has not changed.",
  },
  reject: {
    positionals: ["RUN", "ACTION"],
    alternative: { positionals: ["APPROVAL"], when: /^chk_/ },
    options: { reason: { type: "string" }, "no-follow": { type: "boolean" } },
    summary: "reject RUN ACTION --reason TEXT [--no-follow] | reject chk_ID --reason TEXT",
    details: "Rejects the pending write (the model sees the reason), then follows like approve. reject chk_ID refuses an MCP agent's command.",
  },
  resume: {
    positionals: ["RUN"],
    options: { "no-follow": { type: "boolean" }, ...BUDGET_OPTIONS },
    summary: "resume RUN [--no-follow] [--max-turns N ...]",
    details: `Resumes an interrupted or budget-exhausted run and follows it.\n${BUDGET_HELP}`,
  },
  cancel: { positionals: ["RUN"], options: {}, summary: "cancel RUN" },
  trace: {
    positionals: ["RUN"],
    options: { jsonl: { type: "boolean" }, file: { type: "boolean" } },
    summary: "trace RUN [--jsonl | --file]",
    details:
      "--jsonl prints the canonical export from the ledger; --file prints the run's trace file (<state>/traces/RUN.jsonl: the same events plus\ntimes, the model's text and each observation, redacted and capped) and says on stderr when its last line is torn.",
  },
  diff: { positionals: ["RUN"], options: {}, summary: "diff RUN" },
  probe: {
    positionals: [],
    options: { runtime: { type: "string" }, family: { type: "string" } },
    summary: `probe [--runtime runc|runsc] [--family ${FAMILY_CHOICES}|CUSTOM]`,
    details:
      "Runs the isolation probes in the daemon and stores the report (needed before --model live). Reports are per image family: a live run in the python image needs a passing `probe --family python`. A custom family (built with `npm run image:build -- --family NAME --dockerfile PATH` into the daemon's state dir) is probed the same way.",
  },
  events: {
    positionals: ["RUN"],
    options: { follow: { type: "boolean" }, since: { type: "string" } },
    summary: "events RUN [--follow] [--since N]",
    details: "Prints the run's events; --follow keeps printing until the run stops and exits with its code.",
  },
  policy: {
    positionals: ["show"],
    options: { "policy-profile": { type: "string" }, workspace: { type: "string" } },
    summary: "policy show [--policy-profile interactive|ci|eval] [--workspace DIR]",
    details:
      "Prints the policy a run gets: the daemon's policy file (--policy, else <state-dir>/policy.json, else the\n" +
      "built-in one), the profile, and the tightening of DIR/.mini-agent/policy.json (a workspace file only ever\n" +
      "adds denies or takes auto-approvals away). --json prints it as data.",
  },
  env: {
    positionals: ["list|gc|build"],
    options: {
      "older-than": { type: "string" },
      "dry-run": { type: "boolean" },
      workspace: { type: "string" },
      install: { type: "string" },
      "allow-host": { type: "string", multiple: true },
    },
    summary: 'env list | env gc [--older-than D] [--dry-run] | env build --workspace DIR [--install "npm ci"] [--allow-host HOST[:PORT]]...',
    details:
      "The dependency layers (node_modules, .venv/venv, Go's vendor: built once per lock file and content, mounted\n" +
      "read-only in every sandbox of a run with that key). `env list`: key, folder, size, last used, the runs using it.\n" +
      "`env gc` removes the layers last used longer ago than --older-than (30s, 15m, 12h, 7d; default: any) that no\n" +
      "resumable run uses; a run that may still start a sandbox keeps its layer. --dry-run only says what it would remove.\n" +
      "`env build` runs the install command (default `npm ci`) in an install sandbox: the family's image, no network\n" +
      "but the daemon's egress proxy, which lets through only the registry your configuration names and each\n" +
      "--allow-host, and refuses every other name before connecting (each refusal is printed). The command's first\n" +
      "word picks the tool and family: npm (node; the .npmrc's registry) makes node_modules, pip (python; a requirements\n" +
      "file's --index-url, PIP_INDEX_URL or pip.conf, else PyPI) makes .venv, go (go; GOPROXY/GOSUMDB, direct left out)\n" +
      "makes vendor/. The install's scripts run there, never on this machine; the folder becomes the workspace's layer,\n" +
      "used by later runs with the same package.json and lock, requirements/pyproject, or go.mod and go.sum.\n" +
      "Credentials never enter the sandbox: authenticated registries are not supported yet.",
  },
  gc: {
    positionals: [],
    options: { "older-than": { type: "string" }, keep: { type: "string" }, "dry-run": { type: "boolean" } },
    summary: `gc [--older-than D] [--keep N] [--dry-run]`,
    details:
      "Removes what finished runs (completed, failed, cancelled) left in the state dir: the baseline copy, control\n" +
      "assets and kept test output, the trace file, live run records, an orchestrator's saved pause, and cached baseline test results not\n" +
      `used within the window. Default retention: the newest ${GC_DEFAULTS.keep} finished runs and any finished in the last ${GC_DEFAULTS.olderThan} keep their\n` +
      "files; --older-than (30s, 15m, 12h, 7d) and --keep N change it. A run that can still be resumed or must be\n" +
      "inspected (uncertain) is never touched; `status` and `list` still know every run. --dry-run only says what it would free.",
  },
  health: {
    positionals: [],
    options: {},
    summary: "health",
    details: "Engine reachable, image digest present, runtime, latest probe verdict. Exit 0 when all good, 2 otherwise.",
  },
  mcp: {
    positionals: [],
    options: { workspace: { type: "string" }, http: { type: "string" }, "token-file": { type: "string" } },
    summary: "mcp [--workspace DIR] [--http 127.0.0.1:PORT --token-file FILE]",
    details:
      "An MCP server (Model Context Protocol) over stdio, for Claude Code, Codex, Cursor and any MCP client: the tools\n" +
      "sandbox_run_tests, sandbox_exec, verify_begin, verify and isolation_status, each one call to this daemon (its policy, proven\n" +
      "sandboxes and Verifier; refused when the isolation report is not passing). --workspace: the folder a call uses\n" +
      "when it names none. --http serves Streamable HTTP on a loopback address only, with DNS-rebinding protection,\n" +
      "for clients that send `Authorization: Bearer TOKEN`, TOKEN read from --token-file (mode 0600). See docs/mcp.md.",
  },
} satisfies Record<string, CommandSpec>;

export type CommandName = keyof typeof COMMANDS;

export interface ParsedCommand {
  command: CommandName;
  args: string[];
  opts: Record<string, string | boolean | string[] | undefined>;
}

export type ParseResult =
  | { kind: "command"; cmd: ParsedCommand }
  | { kind: "help"; text: string }
  | {
      kind: "usage_error";
      /** one line: the flag or value at fault and, when one is near, what was meant */
      message: string;
      /** the arguments that show the help for it (`run --help`), after the program's name */
      help: string;
    };

const GLOBAL_HELP = `global options (every command): --socket PATH  --state-dir DIR  --json  --help
  socket default: $MINI_AGENT_SOCKET, else <state-dir>/daemon.sock; state dir default as the daemon's
  ($MINI_AGENT_STATE_DIR, $XDG_STATE_HOME/mini-agent, ~/.local/state/mini-agent)`;

const EXIT_HELP = `exit codes: 0 completed, 1 failed, 2 isolation unverified or daemon/engine unreachable,
            3 awaiting approval, 4 cancelled, 5 budget exhausted, 64 usage error`;

export function usage(command?: CommandName): string {
  if (command) {
    const spec: CommandSpec = COMMANDS[command];
    return [`usage: mini-agent-client ${spec.summary}`, spec.details ?? "", GLOBAL_HELP, EXIT_HELP].filter(Boolean).join("\n\n");
  }
  const lines = [
    ...Object.values(COMMANDS).map((c: CommandSpec) => `  ${c.summary.split("\n")[0]}`),
    "  eval capture RUN --out DIR | eval run SUITE_DIR... --output DIR | eval metrics DIR",
    "  gate --report NEW.json [--baseline OLD.json] [--rules gate.json]",
  ];
  return [
    `usage: mini-agent-client COMMAND [options]`,
    `commands:\n${lines.join("\n")}`,
    GLOBAL_HELP,
    EXIT_HELP,
    "mini-agent-client COMMAND --help shows more.",
  ].join("\n\n");
}

/** Global options may also come before the command (`mini-agent-client --socket S status R`). */
function splitLeadingGlobals(argv: string[]): { globals: string[]; remainder: string[] } {
  const globals: string[] = [];
  let i = 0;
  while (i < argv.length) {
    const a = argv[i]!;
    const name = a.startsWith("--") ? a.slice(2).split("=")[0]! : null;
    const spec = name !== null ? GLOBAL[name] : undefined;
    if (!spec || name === "help") break;
    globals.push(a);
    if (spec.type === "string" && !a.includes("=")) globals.push(argv[++i] ?? "");
    i++;
  }
  return { globals, remainder: argv.slice(i) };
}

/**
 * `eval ...` and `gate ...` have their own grammar (eval/src/cli.ts), loaded only
 * for them. The argv handed over keeps the global options that came first.
 */
export function evalCommandOf(argv: string[]): { top: "eval" | "gate"; argv: string[] } | null {
  const { globals, remainder } = splitLeadingGlobals(argv);
  const [first, ...rest] = remainder;
  return first === "eval" || first === "gate"
    ? { top: first, argv: [...(first === "eval" && rest[0] !== undefined ? [rest[0]] : []), ...globals, ...(first === "eval" ? rest.slice(1) : rest)] }
    : null;
}

export function parseClientArgs(argv: string[]): ParseResult {
  const { globals, remainder } = splitLeadingGlobals(argv);
  const [first, ...afterCommand] = remainder;
  const rest = [...globals, ...afterCommand];
  if (first === undefined || first === "--help" || first === "-h" || first === "help") return { kind: "help", text: usage() };
  if (!(first in COMMANDS)) {
    const known = [...Object.keys(COMMANDS), "eval", "gate"];
    const near = didYouMean(first, known);
    return { kind: "usage_error", message: `unknown command '${first}'${near ? ` (did you mean '${near}'?)` : ""}`, help: "--help" };
  }
  const command = first as CommandName;
  const spec: CommandSpec = COMMANDS[command];
  const help = `${command} --help`;
  const parsed = parseCli(rest, { ...GLOBAL, ...spec.options });
  if (!parsed.ok) return { kind: "usage_error", message: `${command}: ${parsed.message}`, help };
  if (parsed.values.help) return { kind: "help", text: usage(command) };
  const alt = spec.alternative;
  const alternative = alt !== undefined && parsed.positionals.length === alt.positionals.length && alt.when.test(parsed.positionals[0] ?? "");
  if (!alternative && parsed.positionals.length !== spec.positionals.length) {
    const want = spec.positionals.length === 0 ? "no arguments" : spec.positionals.join(" ");
    const got = parsed.positionals.length > spec.positionals.length ? ` (got '${parsed.positionals.slice(spec.positionals.length).join(" ")}' too)` : "";
    return { kind: "usage_error", message: `${command} takes ${want}${got}`, help };
  }
  return { kind: "command", cmd: { command, args: parsed.positionals, opts: parsed.values as ParsedCommand["opts"] } };
}
