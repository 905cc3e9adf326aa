#!/usr/bin/env node
import { miniAgentVersion } from "../config/version.js";
import { createDefaultServices } from "../wiring.js";
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
  onShutdownSignal(handler) {
    const onSignal = (s: NodeJS.Signals) => handler(s);
    process.on("SIGTERM", onSignal);
    process.on("SIGINT", onSignal);
    return () => {
      process.off("SIGTERM", onSignal);
      process.off("SIGINT", onSignal);
    };
  },
});
// exit explicitly: Redis connections and engine handles must not keep a stopped worker alive
process.exit(code);
