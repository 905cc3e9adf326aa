import { MiniAgentError } from "../errors.js";
import { CRASH_POINTS, type CrashHook, type CrashPoint } from "./ports.js";

/** The test-only variable naming a crash point; read once, at the process edge. */
export const CRASH_ENV = "MINI_AGENT_CRASH_AT";

/**
 * Cross-process recovery tests need a real SIGKILL at an exact point (after the
 * intent, after the write but before the receipt, while verifying). Unset, this
 * returns a hook that does nothing; an unknown point name fails loudly.
 */
export function crashHookFromEnv(env: NodeJS.ProcessEnv, kill: () => void = () => process.kill(process.pid, "SIGKILL")): CrashHook {
  const want = env[CRASH_ENV];
  if (want === undefined || want === "") return () => {};
  if (!(CRASH_POINTS as readonly string[]).includes(want)) {
    throw new MiniAgentError("invalid_request", `${CRASH_ENV}=${want} is not a crash point; known: ${CRASH_POINTS.join(", ")}`);
  }
  return (point: CrashPoint) => {
    if (point === want) kill();
  };
}
