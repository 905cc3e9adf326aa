import type { ActiveRun } from "../../runtime/active-run.js";
import type { RuntimeDeps } from "../../runtime/deps.js";
import type { StepOutcome } from "../../runtime/steps.js";

/**
 * What one drive of the Runner shares between our Model and our tools: the
 * host's deps, the run, and whether a host step ended this drive.
 *
 * `halted` is set when a host step stopped the run (budget, cancel, shutdown,
 * out of time, `uncertain`) or paused it outside the SDK's own approval flow;
 * the ledger already says so. The SDK is then unwound by throwing `HostHalt`,
 * and the drive looks at `halted`, not at what the SDK threw (the SDK may wrap
 * it), so nothing else is done for that drive.
 */
export interface DriveScope {
  readonly deps: RuntimeDeps;
  readonly active: ActiveRun;
  halted: Exclude<StepOutcome, "continue"> | null;
}

/** Unwinds the Runner after a host step ended the drive; never seen outside this folder. */
export class HostHalt extends Error {
  constructor(readonly outcome: Exclude<StepOutcome, "continue">) {
    super(`the host ended this drive (${outcome})`);
    this.name = "HostHalt";
  }
}

export function halt(scope: DriveScope, outcome: Exclude<StepOutcome, "continue">): never {
  scope.halted = outcome;
  throw new HostHalt(outcome);
}
