import { termSafe } from "./quote.js";
import { isMiniAgentError } from "../../daemon/src/errors.js";
import { ApiClient } from "./api-client.js";
import { evalCommandOf, parseClientArgs, usage } from "./args.js";
import { HANDLERS, UsageError } from "./commands.js";
import { colorEnabled } from "./color.js";
import { EXIT, exitForError, type ExitCode } from "./exit-codes.js";
import type { Clock } from "./progress.js";

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
}

// the one rule for which daemon to talk to; its own module so `eval` (loaded from here) can use it without a cycle
export { resolveTarget } from "./target.js";
import { resolveTarget } from "./target.js";

export async function main(argv: string[], io: ClientIO): Promise<ExitCode | number> {
  const evalCmd = evalCommandOf(argv);
  if (evalCmd) return runEval(evalCmd, io);
  const parsed = parseClientArgs(argv);
  if (parsed.kind === "help") {
    io.out(parsed.text + "\n");
    return EXIT.ok;
  }
  if (parsed.kind === "usage_error") {
    io.err(`mini-agent-client: ${parsed.message}\n`);
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
      io.err(`mini-agent-client ${cmd.command}: ${termSafe(err.message)}\n\n${usage(cmd.command)}\n`);
      return EXIT.usage;
    }
    if (isMiniAgentError(err)) {
      if (json) io.out(JSON.stringify({ error: { code: err.code, message: err.message, ...(err.details && { details: err.details }) } }) + "\n");
      // a refusal quotes paths, files of a repository and model text
      io.err(`mini-agent-client: ${err.code}: ${termSafe(err.message, { lines: true })}\n`);
      const refresh = err.details?.refresh_command;
      if (typeof refresh === "string" && !err.message.includes(refresh)) io.err(`refresh the isolation report with: ${refresh}\n`);
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
