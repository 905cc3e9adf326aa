/**
 * One step of a run in its OWN process, so group 3 can let the runtime SIGKILL
 * it at a named crash point and recover in a fresh process on the same state dir.
 *
 *   node --import tsx experiments/src/crash-child.ts STATE_DIR FIXTURES_DIR approve RUN_ID ACTION_ID
 *   node --import tsx experiments/src/crash-child.ts STATE_DIR FIXTURES_DIR resume RUN_ID
 *   node --import tsx experiments/src/crash-child.ts STATE_DIR FIXTURES_DIR create WORKSPACE ORCHESTRATOR
 *
 * The image lock is STATE_DIR/sandbox-image.lock.json. MINI_AGENT_CRASH_AT is
 * read here, at the process edge. Prints {"outcome":"ok"|code} when it lives.
 * `create` starts fixtures/linkcheck's canonical replay under ORCHESTRATOR and,
 * once the run waits for an approval, prints {"outcome":"awaiting_approval",
 * "run_id","action_id"} and stays alive without shutting anything down, so the
 * parent's SIGKILL lands between the pause and its resume (group 5).
 */
import path from "node:path";
import { pino } from "pino";
import { statePath } from "../../daemon/src/config/state-dir.js";
import { OrchestratorName } from "../../daemon/src/contracts/run.js";
import { isMiniAgentError } from "../../daemon/src/errors.js";
import { crashHookFromEnv } from "../../daemon/src/runtime/crash.js";
import { createRunService } from "../../daemon/src/runtime/service-impl.js";
import { DockerExecutor } from "../../daemon/src/sandbox/docker-executor.js";

async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const [stateDir, fixturesDir, op, runId, actionId] = argv;
  if (!stateDir || !fixturesDir || !runId || (op !== "approve" && op !== "resume" && op !== "create") || (op !== "resume" && !actionId)) {
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
    if (op === "create") {
      // here RUN_ID is the workspace and ACTION_ID the orchestrator
      const orchestrator = OrchestratorName.safeParse(actionId);
      if (!orchestrator.success) return "invalid_request";
      const created = await runs.createRun({
        workspace: path.resolve(runId),
        fixtureDir: path.join(path.resolve(fixturesDir), "linkcheck"),
        model: "replay",
        trustReplayFile: false,
        backend: "container",
        orchestrator: orchestrator.data,
      });
      const view = await runs.settled(created.run_id);
      if (view.status !== "awaiting_approval" || !view.pending_action) return `not_paused:${view.status}`;
      process.stdout.write(`${JSON.stringify({ outcome: "awaiting_approval", run_id: created.run_id, action_id: view.pending_action.action_id })}\n`);
      // paused at the approval with everything open: only the parent's SIGKILL ends this process
      await new Promise(() => setInterval(() => undefined, 60_000));
    }
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
