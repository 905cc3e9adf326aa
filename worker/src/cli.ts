#!/usr/bin/env node
import path from "node:path";
import { programCommand } from "../../daemon/src/config/program-command.js";
import { shutdownSignalsOf } from "../../daemon/src/config/shutdown-signals.js";
import { miniAgentVersion } from "../../daemon/src/config/version.js";
import { createDefaultServices } from "../../daemon/src/wiring.js";
import { workerMain } from "./worker-main.js";

/** mini-agent-worker: a tiny entry that hands the real process to workerMain(); the exit code is set here, once. */
const code = await workerMain(process.argv.slice(2), {
  env: process.env,
  cwd: process.cwd(),
  pid: process.pid,
  version: miniAgentVersion(),
  now: () => performance.now(),
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  createServices: createDefaultServices,
  program: programOf("mini-agent-worker", process.argv[1] ?? "mini-agent-worker"),
  // the client's entry sits at client/src/cli.* two folders up from this one (dist/ or, under tsx, the sources)
  clientProgram: programOf(
    "mini-agent-client",
    path.resolve(path.dirname(process.argv[1] ?? "."), `../../client/src/cli${path.extname(process.argv[1] ?? ".js")}`),
  ),
  onShutdownSignal: shutdownSignalsOf(process),
});
// exit explicitly: Redis connections and engine handles must not keep a stopped worker alive
process.exit(code);

function programOf(bin: string, file: string): string {
  return programCommand({ bin, file, execArgv: process.execArgv, execPath: process.execPath, pathEnv: process.env.PATH });
}
