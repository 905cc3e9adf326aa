#!/usr/bin/env node
import { createRequire } from "node:module";
import { main } from "./main.js";
import { createDefaultServices } from "./wiring.js";

/**
 * mini-agent-daemon: a tiny entry that hands the real process to main().
 * The exit code is set once, here, from main's return value.
 */
const require = createRequire(import.meta.url);
function packageVersion(): string {
  for (const rel of ["../../package.json", "../../../package.json"]) {
    try {
      return (require(rel) as { version: string }).version;
    } catch {
      /* try the next layout (source vs dist) */
    }
  }
  return "0.0.0";
}

const code = await main(process.argv.slice(2), {
  env: process.env,
  cwd: process.cwd(),
  pid: process.pid,
  version: packageVersion(),
  out: (line) => process.stdout.write(line + "\n"),
  err: (line) => process.stderr.write(line + "\n"),
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
// exit explicitly: an engine or ledger handle must not keep a stopped daemon alive
process.exit(code);
