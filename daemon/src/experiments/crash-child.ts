/**
 * One step of a run in its OWN process, so group 3 can let the runtime SIGKILL
 * it at a named crash point and recover in a fresh process on the same state dir.
 *
 *   node --import tsx daemon/src/experiments/crash-child.ts STATE_DIR FIXTURES_DIR approve RUN_ID ACTION_ID
 *   node --import tsx daemon/src/experiments/crash-child.ts STATE_DIR FIXTURES_DIR resume RUN_ID
 *
 * The image lock is STATE_DIR/sandbox-image.lock.json. MINI_AGENT_CRASH_AT is
 * read here, at the process edge. Prints {"outcome":"ok"|code} when it lives.
 */
import path from "node:path";
import { pino } from "pino";
import { statePath } from "../config/state-dir.js";
import { isMiniAgentError } from "../errors.js";
import { crashHookFromEnv } from "../runtime/crash.js";
import { createRunService } from "../runtime/service-impl.js";
import { DockerExecutor } from "../sandbox/docker-executor.js";

async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const [stateDir, fixturesDir, op, runId, actionId] = argv;
  if (!stateDir || !fixturesDir || !runId || (op !== "approve" && op !== "resume") || (op === "approve" && !actionId)) {
    return "invalid_request";
  }
  const executor = new DockerExecutor({ lockPath: statePath(stateDir, "imageLock") });
  const runs = createRunService({
    stateDir,
    executorFactory: () => executor,
    crash: crashHookFromEnv(env),
    logger: pino({ level: "silent" }),
    builtinFixturesDir: path.resolve(fixturesDir),
  });
  try {
    await runs.recoverAtStartup();
    if (op === "approve") await runs.approve(runId, actionId!);
    else await runs.resume(runId);
    await runs.settled(runId);
    return "ok";
  } catch (err) {
    return isMiniAgentError(err) ? err.code : "internal";
  } finally {
    await runs.shutdown();
  }
}

main(process.argv.slice(2), process.env).then(
  (outcome) => process.stdout.write(`${JSON.stringify({ outcome })}\n`),
  () => {
    process.stdout.write(`${JSON.stringify({ outcome: "internal" })}\n`);
    process.exitCode = 1;
  },
);
