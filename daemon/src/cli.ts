#!/usr/bin/env node
import { programCommand } from "./config/program-command.js";
import { shutdownSignalsOf } from "./config/shutdown-signals.js";
import { miniAgentVersion } from "./config/version.js";
import { main } from "./main.js";
import { createDefaultServices } from "./wiring.js";

/**
 * mini-agent-daemon: a tiny entry that hands the real process to main().
 * The exit code is set once, here, from main's return value.
 */
const code = await main(process.argv.slice(2), {
  env: process.env,
  cwd: process.cwd(),
  program: programCommand({
    bin: "mini-agent-daemon",
    file: process.argv[1] ?? "mini-agent-daemon",
    execArgv: process.execArgv,
    execPath: process.execPath,
    pathEnv: process.env.PATH,
  }),
  pid: process.pid,
  version: miniAgentVersion(),
  out: (line) => process.stdout.write(line + "\n"),
  err: (line) => process.stderr.write(line + "\n"),
  createServices: createDefaultServices,
  onShutdownSignal: shutdownSignalsOf(process),
});
// exit explicitly: an engine or ledger handle must not keep a stopped daemon alive
process.exit(code);
