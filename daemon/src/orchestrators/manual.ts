import { driveRun } from "../runtime/loop.js";
import { verifyAndFinish } from "../runtime/verify-step.js";
import type { Orchestrator } from "./orchestrator.js";
import { miniAgentVersion } from "../config/version.js";

/** mini-agent's own loop (runtime/loop.ts): the reference the adapters are measured against. */
export function manualOrchestrator(): Orchestrator {
  return {
    name: "manual",
    package: { name: "mini-agent", version: miniAgentVersion() },
    writesOnApprove: true,
    drive: (deps, active, mode) => (mode === "verify" ? verifyAndFinish(deps, active) : driveRun(deps, active)),
  };
}
