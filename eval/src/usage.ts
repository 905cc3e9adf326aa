import { EXIT, termSafe } from "../../client-lib/index.js";
import { usageErrorText } from "../../daemon/src/config/cli-args.js";
import type { EvalIO } from "./command.js";

/**
 * A usage error of an eval command, in the one shape every mini-agent program
 * uses (config/cli-args.ts): what is wrong in one line, then where the help is;
 * exit 64, nothing changed. The eval commands once printed Node's own message
 * and then their whole usage text after it.
 */
export function usageFail(io: EvalIO, command: string, message: string): number {
  const program = `mini-agent-client ${command}`;
  io.err(usageErrorText(program, termSafe(message), `${program} --help`));
  return EXIT.usage;
}
