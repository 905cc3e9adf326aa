import type { GcOptions, GcResult } from "../retention/gc.js";
import type {
  CheckApprovalBody,
  CheckApprovalRequest,
  HealthBody,
  PolicyShowBody,
  SandboxExecBody,
  SandboxExecRequest,
  SandboxTestsBody,
  SandboxTestsRequest,
  VerificationBody,
  VerifyBeginRequest,
  VerifyBegunBody,
  VerifyRequest,
} from "../contracts/api.js";
import type { ProfileName } from "../contracts/policy.js";
import type { Runtime } from "../contracts/sandbox.js";
import type { TaskDrafter } from "../adhoc/index.js";
import type { LiveGate } from "../gate/port.js";
import type { RunService } from "../runtime/service.js";
import type { ImageFamily } from "../contracts/test-report.js";
import type { CaptureService } from "../capture/index.js";
import type { EnvService } from "../runtime/env-layers.js";

/**
 * What the HTTP API needs besides the RunService. main.ts adapts the sandbox
 * and probe parts to these, so the API does not know dockerode or the report
 * file layout, and a test can pass small fakes.
 */
export interface IsolationService {
  /** runs the probes now and stores the report; resolves with it (also when it failed) */
  runProbes(runtime?: Runtime, family?: ImageFamily): Promise<Record<string, unknown>>;
  /** latest stored report for the current key, or null */
  latestReport(): Promise<Record<string, unknown> | null>;
  /** engine and isolation part of GET /v1/health; must not throw (unreachable engine is data) */
  health(): Promise<Pick<HealthBody, "engine" | "isolation" | "families">>;
}

// the ports creating a run uses (runtime/create-run/), named here too for the API's other callers
export type { GateVerdict, LiveGate } from "../gate/port.js";
export type { TaskDrafter } from "../adhoc/index.js";

/** The daemon's policy as a run would get it (`policy show`); policy_invalid for a broken workspace rules file. */
export interface PolicyService {
  show(input: { profile?: ProfileName; workspace?: string }): PolicyShowBody;
}

export interface RetentionService {
  gc(opts: GcOptions): Promise<GcResult>;
  stateDir(): Promise<{ path: string; bytes: number | null }>;
}

/** Workspace checks without a model (checks/, the MCP server's tools): each refuses unless the family's sandbox is proven. */
export interface ChecksService {
  tests(req: SandboxTestsRequest): Promise<SandboxTestsBody>;
  exec(req: SandboxExecRequest): Promise<SandboxExecBody>;
  begin(req: VerifyBeginRequest): Promise<VerifyBegunBody>;
  verify(req: VerifyRequest): Promise<VerificationBody>;
  /** a sandbox_exec's question to a person: shown, and answered by the person (`approve`/`reject chk_…`) */
  approval(id: string): CheckApprovalBody;
  decide(id: string, req: CheckApprovalRequest): CheckApprovalBody;
}

export interface ApiDeps {
  runService: RunService;
  drafter: TaskDrafter;
  isolation: IsolationService;
  liveGate: LiveGate;
  policy: PolicyService;
  /** `eval capture`: a finished run as an eval case folder (capture/) */
  capture: CaptureService;
  /** `env list|gc`: the dependency layers (absent: a daemon without an engine keeps none) */
  env?: EnvService;
  /** `gc` and the state dir's size in `health` (retention/gc.ts); absent: no gc (a test's daemon) */
  retention?: RetentionService;
  /** the workspace checks (absent: a daemon without an engine has none, and says so) */
  checks?: ChecksService;
  version: string;
  pid: number;
  maxBodyBytes: number;
  maxWaitMs: number;
}
