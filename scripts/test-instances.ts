import fs from "node:fs";
import { instanceIdFor } from "../daemon/src/config/state-dir.js";

/**
 * Which state dir each test daemon and worker ran on, so the test run's leftover check
 * (scripts/leftovers.ts) can say where a leaked sandbox or layer came from: everything
 * a daemon makes carries only its instance id (a hash of the state dir), and the state
 * dir's temp-folder prefix names the test file that made it. The file is the one
 * MINI_AGENT_TEST_INSTANCES names (scripts/test.sh sets it); unset, nothing is kept.
 */
const FILE_ENV = "MINI_AGENT_TEST_INSTANCES";

export function noteTestInstance(stateDir: string, env: NodeJS.ProcessEnv = process.env): void {
  const file = env[FILE_ENV];
  if (!file) return;
  // one short line per append: concurrent test workers never interleave within it
  fs.appendFileSync(file, `${instanceIdFor(stateDir)}\t${stateDir}\n`);
}

/** instance id → the state dir noted for it (the last, should two be) */
export function testInstances(env: NodeJS.ProcessEnv = process.env): Map<string, string> {
  const file = env[FILE_ENV];
  const out = new Map<string, string>();
  if (!file || !fs.existsSync(file)) return out;
  for (const line of fs.readFileSync(file, "utf8").split("\n")) {
    const [instance, stateDir] = line.split("\t");
    if (instance && stateDir) out.set(instance, stateDir);
  }
  return out;
}
