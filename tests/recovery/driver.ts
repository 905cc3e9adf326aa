/**
 * Drives the RunService in its own process so a test can SIGKILL it at a named
 * crash point and start a fresh process on the same state dir.
 *
 *   node --import tsx tests/recovery/driver.ts STATE_DIR create WORKSPACE
 *   node --import tsx tests/recovery/driver.ts STATE_DIR approve RUN_ID ACTION_ID
 *   node --import tsx tests/recovery/driver.ts STATE_DIR resume RUN_ID
 *
 * Prints the run view as one JSON line. MINI_AGENT_CRASH_AT is read here, at
 * the process edge, and nowhere else. MINI_AGENT_DRIVER_BACKEND=trusted_local
 * runs without an engine; MINI_AGENT_DRIVER_AUTO_EDIT=GLOB gives the daemon a
 * policy that approves writes inside GLOB (a write the POLICY approved, crashed).
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { DockerExecutor } from "../../daemon/src/sandbox/docker-executor.js";
import { LocalExecutor } from "../../daemon/src/sandbox/local-executor.js";
import { crashHookFromEnv } from "../../daemon/src/runtime/crash.js";
import { createRunService } from "../../daemon/src/runtime/service-impl.js";
import type { RunView } from "../../daemon/src/runtime/service.js";

const [stateDir, command, a, b] = process.argv.slice(2);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

async function main(): Promise<void> {
  if (!stateDir || !command) throw new Error("usage: driver.ts STATE_DIR create|approve|resume ...");
  const backend = process.env.MINI_AGENT_DRIVER_BACKEND === "trusted_local" ? "trusted_local" : "container";
  const executor = backend === "container" ? new DockerExecutor({ lockPath: path.join(stateDir, "sandbox-image.lock.json") }) : new LocalExecutor();
  const autoEdit = process.env.MINI_AGENT_DRIVER_AUTO_EDIT;
  const runs = createRunService({
    stateDir,
    executorFactory: () => executor,
    crash: crashHookFromEnv(process.env),
    ...(autoEdit && {
      policy: { file: { schema_version: 1, auto_edit: [autoEdit] }, source: "/etc/mini-agent/policy.json", digest: "0".repeat(64) },
    }),
  });
  await runs.recoverAtStartup();
  let view: RunView;
  if (command === "create") {
    const created = await runs.createRun({
      workspace: a!,
      fixtureDir: path.join(root, "fixtures", "linkcheck"),
      model: "replay",
      trustReplayFile: false,
      backend,
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
  await runs.shutdown();
}

main().catch((err) => {
  process.stdout.write(JSON.stringify({ error: { code: err?.code ?? "internal", message: String(err?.message ?? err) } }) + "\n");
  process.exitCode = 1;
});
