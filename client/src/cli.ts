#!/usr/bin/env node
import { programCommand } from "../../daemon/src/config/program-command.js";
import { main } from "./main.js";

/**
 * `mini-agent-client trace RUN | head`: the reader closed the pipe, so writing
 * fails with EPIPE. That is the reader's choice, not an error of ours: end
 * quietly with the status a shell gives a program killed by SIGPIPE (128 + 13),
 * never a stack trace. Any other stream error is still reported.
 */
const CLOSED_PIPE_EXIT = 141;
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code === "EPIPE") process.exit(CLOSED_PIPE_EXIT);
    throw err;
  });
}

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
