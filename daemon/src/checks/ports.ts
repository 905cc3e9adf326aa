import type { KnownSecrets } from "../redact/index.js";
import type { GateVerdict } from "../api/ports.js";
import type { Draft, DraftInput } from "../adhoc/index.js";
import type { ImageFamily } from "../contracts/test-report.js";
import type { Executor } from "../sandbox/executor.js";
import type { EffectivePolicy } from "../contracts/policy.js";
import type { CheckApprovals } from "./approvals.js";

/**
 * What the workspace checks use, each a piece a run already uses: the ad-hoc
 * drafter (the same workspace refusals), the isolation gate, the container
 * executor of a family (fresh sandbox per call), and the daemon's secrets.
 * Passed in so the daemon's wiring chooses them and a test can replace one.
 */
export interface ChecksDeps {
  draft(input: DraftInput): Promise<Draft>;
  gate(family: ImageFamily): Promise<GateVerdict>;
  /** the CONTAINER executor of the family: a check never runs on the host */
  executorFor(family: ImageFamily): Executor;
  /** the command policy a run of this workspace would get (daemon file, default profile, the workspace's rules) */
  policyFor(workspace: string): EffectivePolicy;
  stateDir: string;
  knownSecrets(): KnownSecrets;
  /** the questions a sandbox_exec asked a person, and their answers (approvals.ts) */
  approvals: CheckApprovals;
  clock?: () => Date;
}
