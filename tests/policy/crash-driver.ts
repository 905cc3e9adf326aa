/**
 * Drives a RunService whose daemon policy auto-approves tests/** in its own
 * process, so a test can SIGKILL it at a named crash point inside a write the
 * POLICY approved, and start a fresh process on the same state dir.
 *
 *   node --import tsx tests/policy/crash-driver.ts STATE_DIR create WORKSPACE
 *   node --import tsx tests/policy/crash-driver.ts STATE_DIR resume RUN_ID
 *
 * trusted_local with the built-in linkcheck replay: no engine needed. Prints
 * the run view as one JSON line. MINI_AGENT_CRASH_AT is read here only.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { crashHookFromEnv } from "../../daemon/src/runtime/crash.js";
import { createRunService } from "../../daemon/src/runtime/service-impl.js";
import type { RunView } from "../../daemon/src/runtime/service.js";
import { LocalExecutor } from "../../daemon/src/sandbox/local-executor.js";

const [stateDir, command, a] = process.argv.slice(2);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

async function main(): Promise<void> {
  if (!stateDir || !command) throw new Error("usage: crash-driver.ts STATE_DIR create|resume ...");
  const runs = createRunService({
    stateDir,
    executorFactory: () => new LocalExecutor(),
    crash: crashHookFromEnv(process.env),
    policy: { file: { schema_version: 1, auto_edit: ["tests/**"] }, source: "/etc/mini-agent/policy.json", digest: "0".repeat(64) },
  });
  await runs.recoverAtStartup();
  let view: RunView;
  if (command === "create") {
    const created = await runs.createRun({
      workspace: a!,
      fixtureDir: path.join(root, "fixtures", "linkcheck"),
      model: "replay",
      trustReplayFile: false,
      backend: "trusted_local",
    });
    view = await runs.settled(created.run_id);
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
