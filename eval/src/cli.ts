import { isMiniAgentError } from "../../daemon/src/errors.js";
import { didYouMean } from "../../daemon/src/config/cli-args.js";
import { usageFail } from "./usage.js";
import { EXIT, exitForError, termSafe } from "../../client-lib/index.js";
import type { EvalCommand, EvalIO } from "./command.js";

/**
 * `mini-agent-client eval SUB ...` and `mini-agent-client gate ...`: loaded by
 * the client only for these commands (a dynamic import, so `status` and
 * `approve` start without any of it). Each subcommand is its own module with
 * its own grammar; this table is the one place that names them.
 */
const SUBCOMMANDS: Record<string, () => Promise<EvalCommand>> = {
  capture: async () => (await import("./capture-command.js")).captureCommand,
  run: async () => (await import("./run-command.js")).runCommand,
  metrics: async () => (await import("./metrics-command.js")).metricsCommand,
  cancel: async () => (await import("./fleet/cancel-command.js")).cancelCommand,
  import: async () => (await import("./swebench/import-command.js")).importCommand,
};

const EVAL_USAGE = `usage: mini-agent-client eval capture RUN --out DIR
       mini-agent-client eval run SUITE_DIR... --output DIR [--model replay|live] [--concurrency N]
                                  [--runtime runc|runsc] [--policy-profile eval] [--rerun] [--json] [--queue URL]
                                  [--queue-password-file FILE]
       mini-agent-client eval metrics DIR [--json]
       mini-agent-client eval cancel --queue URL [--queue-password-file FILE] --output DIR
       mini-agent-client eval import --swebench FILE.jsonl --repos DIR [--out DIR]
mini-agent-client eval SUB --help shows more.`;

/**
 * argv: for `eval`, the subcommand first, then everything else (global options
 * included); for `gate`, its options. Errors end here, as every client command's
 * do: the code and message, never a stack.
 */
export async function evalMain(top: "eval" | "gate", argv: string[], io: EvalIO): Promise<number> {
  try {
    return await dispatch(top, argv, io);
  } catch (err) {
    if (isMiniAgentError(err)) {
      // a refusal quotes case folders, paths and files of a repository
      io.err(`mini-agent-client ${top}: ${err.code}: ${termSafe(err.message, { lines: true })}\n`);
      return exitForError(err.code);
    }
    io.err(`mini-agent-client ${top}: unexpected error: ${termSafe((err as Error)?.message ?? String(err), { lines: true })}\n`);
    return EXIT.failed;
  }
}

async function dispatch(top: "eval" | "gate", argv: string[], io: EvalIO): Promise<number> {
  if (top === "gate") return (await import("./gate-command.js")).gateCommand.main(argv, io);
  const [sub, ...rest] = argv;
  const names = Object.keys(SUBCOMMANDS);
  if (sub === "--help" || sub === "-h" || sub === "help") {
    io.out(`${EVAL_USAGE}\n`);
    return 0;
  }
  if (sub === undefined) return usageFail(io, "eval", `name a subcommand: ${names.join(", ")}`);
  const load = SUBCOMMANDS[sub];
  if (!load) {
    const near = didYouMean(sub, names);
    return usageFail(io, "eval", `unknown subcommand '${sub}'${near ? ` (did you mean ${near}?)` : ""}; one of ${names.join(", ")}`);
  }
  return (await load()).main(rest, io);
}
