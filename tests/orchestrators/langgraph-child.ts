/**
 * One daemon-like process on a state dir, driving a linkcheck run under the
 * langgraph orchestrator, so a test can SIGKILL it at an approval pause (or at
 * a named crash point) and go on in a fresh process.
 *
 *   node --import tsx tests/orchestrators/langgraph-child.ts STATE_DIR create WORKSPACE
 *   node --import tsx tests/orchestrators/langgraph-child.ts STATE_DIR approve RUN_ID ACTION_ID
 *   node --import tsx tests/orchestrators/langgraph-child.ts STATE_DIR resume RUN_ID
 *
 * Prints the run view as one JSON line once the run stops or pauses; at a pause
 * it then stays alive (holding its ledger and checkpoint connections) until it
 * is killed, as a daemon would. Logs (JSON) go to stderr. MINI_AGENT_CRASH_AT
 * is read here, at the process edge.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { pino } from "pino";
import { crashHookFromEnv } from "../../daemon/src/runtime/crash.js";
import { createRunService } from "../../daemon/src/runtime/service-impl.js";
import type { RunView } from "../../daemon/src/runtime/service.js";
import { DockerExecutor } from "../../daemon/src/sandbox/docker-executor.js";

const [stateDir, command, a, b] = process.argv.slice(2);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

async function main(): Promise<void> {
  if (!stateDir || !command) throw new Error("usage: langgraph-child.ts STATE_DIR create|approve|resume ...");
  const executor = new DockerExecutor({ lockPath: path.join(stateDir, "sandbox-image.lock.json") });
  const runs = createRunService({
    stateDir,
    executorFactory: () => executor,
    crash: crashHookFromEnv(process.env),
    logger: pino({ level: "info" }, pino.destination(2)),
  });
  await runs.recoverAtStartup();
  let view: RunView;
  if (command === "create") {
    const created = await runs.createRun({
      workspace: a!,
      fixtureDir: path.join(root, "fixtures", "linkcheck"),
      model: "replay",
      trustReplayFile: false,
      backend: "container",
      orchestrator: "langgraph",
    });
    view = await runs.settled(created.run_id);
  } else if (command === "approve") {
    await runs.approve(a!, b!);
    view = await runs.settled(a!);
  } else if (command === "resume") {
    await runs.resume(a!);
    view = await runs.settled(a!);
  } else {
    throw new Error(`unknown command ${command}`);
  }
  process.stdout.write(JSON.stringify(view) + "\n");
  // paused: stay up like a daemon until killed; the test's SIGKILL is the crash
  if (view.status === "awaiting_approval") await new Promise(() => setInterval(() => {}, 60_000));
  await runs.shutdown();
}

main().catch((err) => {
  process.stdout.write(JSON.stringify({ error: { code: err?.code ?? "internal", message: String(err?.message ?? err) } }) + "\n");
  process.exitCode = 1;
});
