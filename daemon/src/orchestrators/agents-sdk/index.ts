import type { Orchestrator, OrchestratorOptions } from "../orchestrator.js";
import { packageVersion } from "../versions.js";
import { driveWithSdk } from "./runner.js";
import { SavedRunStates } from "./saved-state.js";

/**
 * The OpenAI Agents SDK takes the turns: our decision source behind the SDK's
 * Model interface, our tools as its function tools, its human-in-the-loop
 * interruption and serialised RunState for approvals (saved in the state
 * dir, resumed in a new process). Policy, the ledger, the sandbox and the
 * Verifier stay the host's (README.md beside this folder).
 */
export function agentsSdkOrchestrator(options: OrchestratorOptions): Orchestrator {
  const version = packageVersion("@openai/agents");
  // the core is what runs; it is released in lockstep with @openai/agents, and a saved RunState names it
  const coreVersion = packageVersion("@openai/agents-core");
  const states = new SavedRunStates(options.stateDir);
  return {
    name: "agents-sdk",
    package: { name: "@openai/agents", version },
    // approve only records the decision; the approved tool's own execute carries out the write (finishPending)
    writesOnApprove: false,
    drive: (deps, active, mode) => driveWithSdk(states, coreVersion, deps, active, mode),
  };
}
