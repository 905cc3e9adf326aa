import { termSafe, ApiClient, EXIT, exitForError, type ExitCode, type Clock, resolveTarget } from "../../client-lib/index.js";
import { isMiniAgentError } from "../../daemon/src/errors.js";
import { rewriteProgram } from "../../daemon/src/config/program-command.js";
import { usageErrorText } from "../../daemon/src/config/cli-args.js";
import { evalCommandOf, parseClientArgs } from "./args.js";
import { HANDLERS, UsageError } from "./commands.js";
import { colorEnabled } from "./color.js";

/** Everything the client touches, passed in so tests can drive main() directly. */
export interface ClientIO {
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** stdin and stdout are a terminal: the client may ask y/N */
  isTTY: boolean;
  /** stdout is a terminal: diffs in colour (unless NO_COLOR) and shown without raw control characters */
  stdoutIsTTY: boolean;
  /** stderr is a terminal: the one-line progress indicator */
  stderrIsTTY: boolean;
  clock: Clock;
  out(s: string): void;
  err(s: string): void;
  ask(question: string): Promise<string>;
  /** this program as the user can run it again (`mini-agent-client`, or `node /path/cli.js` when not on the PATH); default: the bin's name */
  program?: string;
}

// the one rule for which daemon to talk to; its own module so `eval` (loaded from here) can use it without a cycle

export async function main(argv: string[], io: ClientIO): Promise<ExitCode | number> {
  const evalCmd = evalCommandOf(argv);
  if (evalCmd) return runEval(evalCmd, io);
  const parsed = parseClientArgs(argv);
  if (parsed.kind === "help") {
    io.out(parsed.text + "\n");
    return EXIT.ok;
  }
  const program = io.program ?? "mini-agent-client";
  if (parsed.kind === "usage_error") {
    io.err(usageErrorText("mini-agent-client", parsed.message, `${program} ${parsed.help}`));
    return EXIT.usage;
  }
  const { cmd } = parsed;
  const target = resolveTarget(cmd.opts, io);
  const api = new ApiClient({ socketPath: target.socketPath, stateDir: target.stateDir, explicitSocket: target.explicitSocket });
  const json = cmd.opts.json === true;
  try {
    return await HANDLERS[cmd.command](cmd, {
      api,
      cwd: io.cwd,
      json,
      commandPrefix: target.prefix,
      program,
      isTTY: io.isTTY,
      progress: io.stderrIsTTY,
      diffStyle: { color: colorEnabled(io.env, io.stdoutIsTTY), terminal: io.stdoutIsTTY },
      clock: io.clock,
      out: io.out,
      err: io.err,
      ask: io.ask,
    });
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(usageErrorText("mini-agent-client", `${cmd.command}: ${termSafe(err.message)}`, `${program} ${cmd.command} --help`));
      return EXIT.usage;
    }
    if (isMiniAgentError(err)) {
      if (json) io.out(JSON.stringify({ error: { code: err.code, message: err.message, ...(err.details && { details: err.details }) } }) + "\n");
      // a refusal quotes paths, files of a repository and model text; a command the daemon names
      // (`mini-agent-client probe`) is printed in the form this user runs the client
      io.err(`mini-agent-client: ${err.code}: ${termSafe(rewriteProgram(err.message, "mini-agent-client", program), { lines: true })}\n`);
      const refresh = err.details?.refresh_command;
      // always the full command: the daemon's message names it without the --socket/--state-dir this user needs
      if (typeof refresh === "string") {
        io.err(`refresh the isolation report with: ${rewriteProgram(refresh, "mini-agent-client", program)}${target.prefix ? ` ${target.prefix}` : ""}\n`);
      }
      return exitForError(err.code);
    }
    // A bug in the client itself: say so briefly, without a stack.
    io.err(`mini-agent-client: unexpected error: ${termSafe((err as Error)?.message ?? String(err), { lines: true })}\n`);
    return EXIT.failed;
  } finally {
    await api.close().catch(() => undefined);
  }
}

/**
 * `eval` and `gate` (eval/src): loaded only for them. evalMain reports its own
 * errors: it runs the compiled modules beside this bundle, whose error class is
 * not this bundle's copy, so an `instanceof` here could not recognise them.
 */
async function runEval(cmd: { top: "eval" | "gate"; argv: string[] }, io: ClientIO): Promise<number> {
  const { evalMain } = await import("../../eval/src/cli.js");
  return evalMain(cmd.top, cmd.argv, io);
}
