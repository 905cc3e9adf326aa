#!/usr/bin/env node
import { programCommand } from "../../daemon/src/config/program-command.js";
import { main } from "./main.js";

/** mini-agent-client: a tiny entry; main() decides, the exit code is set here once. */
const code = await main(process.argv.slice(2), {
  env: process.env,
  cwd: process.cwd(),
  program: programCommand({
    bin: "mini-agent-client",
    file: process.argv[1] ?? "mini-agent-client",
    execArgv: process.execArgv,
    execPath: process.execPath,
    pathEnv: process.env.PATH,
  }),
  isTTY: process.stdout.isTTY === true && process.stdin.isTTY === true,
  stdoutIsTTY: process.stdout.isTTY === true,
  stderrIsTTY: process.stderr.isTTY === true,
  clock: {
    now: () => performance.now(),
    every(ms, tick) {
      const timer = setInterval(tick, ms);
      return () => clearInterval(timer);
    },
  },
  out: (s) => process.stdout.write(s),
  err: (s) => process.stderr.write(s),
  async ask(question) {
    // loaded when a question is asked, not by every status and list (issue 10 item 16)
    const readline = await import("node:readline/promises");
    const rl = readline.createInterface({ input: process.stdin, output: process.stdout });
    try {
      return await rl.question(question);
    } finally {
      rl.close();
    }
  },
});
process.exitCode = code;
