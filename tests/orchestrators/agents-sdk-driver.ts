/**
 * Drives a RunService with the agents-sdk orchestrator in its own process, so
 * a test can SIGKILL it at an approval pause (or at a named crash point) and
 * go on in a fresh process on the same state dir.
 *
 *   node --import tsx tests/orchestrators/agents-sdk-driver.ts STATE_DIR create WORKSPACE [REPLAY]
 *   node --import tsx tests/orchestrators/agents-sdk-driver.ts STATE_DIR approve RUN_ID ACTION_ID
 *   node --import tsx tests/orchestrators/agents-sdk-driver.ts STATE_DIR resume RUN_ID
 *   node --import tsx tests/orchestrators/agents-sdk-driver.ts STATE_DIR complete WORKSPACE   (create, approve every write)
 *
 * Prints the run view as one JSON line. The environment is read here, at the
 * process edge: MINI_AGENT_DRIVER_BACKEND=trusted_local runs without an engine;
 * MINI_AGENT_DRIVER_HOLD=1 keeps the process alive after the line (the test
 * kills it); MINI_AGENT_DRIVER_LOG=FILE gets the daemon's log as JSON lines;
 * MINI_AGENT_CRASH_AT is the runtime's crash point.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { pino } from "pino";
import { crashHookFromEnv } from "../../daemon/src/runtime/crash.js";
import { createRunService } from "../../daemon/src/runtime/service-impl.js";
import { DockerExecutor } from "../../daemon/src/sandbox/docker-executor.js";
import { LocalExecutor } from "../../daemon/src/sandbox/local-executor.js";

const [stateDir, command, a, b] = process.argv.slice(2);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const fixture = path.join(root, "fixtures", "linkcheck");

async function main(): Promise<void> {
  if (!stateDir || !command) throw new Error("usage: agents-sdk-driver.ts STATE_DIR create|approve|resume|complete ...");
  const backend = process.env.MINI_AGENT_DRIVER_BACKEND === "trusted_local" ? "trusted_local" : "container";
  const executor = backend === "container" ? new DockerExecutor({ lockPath: path.join(stateDir, "sandbox-image.lock.json") }) : new LocalExecutor();
  const logFile = process.env.MINI_AGENT_DRIVER_LOG;
  const runs = createRunService({
    stateDir,
    executorFactory: () => executor,
    crash: crashHookFromEnv(process.env),
    logger: logFile ? pino({ level: "info" }, pino.destination({ dest: logFile, sync: true })) : pino({ level: "silent" }),
  });
  await runs.recoverAtStartup();
  const create = async (workspace: string, replay?: string) => {
    const created = await runs.createRun({
      workspace,
      fixtureDir: fixture,
      model: "replay",
      replayPath: replay ? path.join(fixture, replay) : undefined,
      trustReplayFile: false,
      backend,
      orchestrator: "agents-sdk",
    });
    return runs.settled(created.run_id);
  };
  let view;
  if (command === "create") {
    view = await create(a!, b);
  } else if (command === "approve") {
    await runs.approve(a!, b!);
    view = await runs.settled(a!);
  } else if (command === "resume") {
    await runs.resume(a!);
    view = await runs.settled(a!);
  } else if (command === "complete") {
    view = await create(a!);
    for (let i = 0; i < 10 && view.status === "awaiting_approval" && view.pending_action; i++) {
      await runs.approve(view.run_id, view.pending_action.action_id);
      view = await runs.settled(view.run_id);
    }
  } else {
    throw new Error(`unknown command ${command}`);
  }
  process.stdout.write(`${JSON.stringify(view)}\n`);
  if (process.env.MINI_AGENT_DRIVER_HOLD === "1") {
    // held at the pause with everything open, as a daemon would be, until the test SIGKILLs it
    setInterval(() => undefined, 60_000);
    return;
  }
  await runs.shutdown();
}

main().catch((err) => {
  process.stdout.write(`${JSON.stringify({ error: { code: err?.code ?? "internal", message: String(err?.message ?? err) } })}\n`);
  process.exitCode = 1;
});
